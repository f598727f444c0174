/* fdio.h: file-descriptor helpers shared by the core and the probes. */
#ifndef GPUCHECKUP_FDIO_H
#define GPUCHECKUP_FDIO_H

#include <stddef.h>

/* Write all LEN bytes of BUF to FD, retrying short writes and EINTR. Returns 0, or -1 with errno set. */
int fdio_write_all(int fd, const void *buf, size_t len);

#endif
