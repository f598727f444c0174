/* devnode.h: open a device node as a compute runtime does and say why it fails (errno, group, membership). */
#ifndef GPUCHECKUP_DEVNODE_H
#define GPUCHECKUP_DEVNODE_H

#include <json-c/json.h>

#include "hostfs.h"

/* Open PATH (through FS) O_RDWR, as ROCm's libhsakmt opens /dev/kfd and Level Zero's and ROCm's drivers open
 * a render node, and close it again. A new object {path, opened, errno ("EACCES"...), error (strerror),
 * group (the node's group as FS's /etc/group names it), user_in_group (this process holds that group),
 * listed_in_group (/etc/group lists USER, may be NULL, in it)}; unknown members null. Only for files that
 * are this machine's (probe_host_files): what this process may open says nothing of another tree. */
json_object *devnode_open_json(const struct hostfs *fs, const char *path, const char *user);
/* "EACCES (Permission denied): its group is render, and this process is not in it" for such an object
 * that did not open, NULL for one that did (heap, caller frees). */
char *devnode_why(json_object *o);

#endif
