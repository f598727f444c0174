/* fdio.c: file-descriptor helpers shared by the core and the probes. */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

int fdio_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}
