/* procinfo.c: who a process is, from /proc/PID through hostfs: parent and start (stat), user (status, /etc/passwd), command (comm). */
#include "procinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strutil.h"

long procinfo_stat(const struct hostfs *fs, long pid, unsigned long long *start)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (hostfs_read_file(fs, path, 4096, &text, NULL) != 0)
        return -1;
    const char *p = strrchr(text, ')');
    long ppid = -1;
    unsigned long long st = 0;
    /* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
     * priority nice threads itrealvalue starttime" (proc(5)) */
    if (p && sscanf(p + 1, " %*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                    &ppid, &st) == 2 && start)
        *start = st;
    free(text);
    return ppid;
}

bool procinfo_is_ours(const struct hostfs *fs, long pid)
{
    long self = (long)getpid();
    for (int i = 0; i < PROCINFO_PPID_DEPTH && pid > 1; i++) {
        if (pid == self)
            return true;
        pid = procinfo_stat(fs, pid, NULL);
    }
    return false;
}

/* The name of UID in passwd TEXT, or NULL (heap). */
static char *procinfo_passwd_name(const char *text, long uid)
{
    char key[32];
    snprintf(key, sizeof(key), ":%ld:", uid);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *c1 = strchr(l, ':'), *eol = strchr(l, '\n');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c1 && c1 > l && c2 && (!eol || c2 < eol) && strncmp(c2, key, strlen(key)) == 0)
            return str_printf("%.*s", (int)(c1 - l), l);
    }
    return NULL;
}

char *procinfo_user(const struct hostfs *fs, long pid, const char *passwd)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (hostfs_read_file(fs, path, 65536, &text, NULL) != 0)
        return NULL;
    const char *u = strstr(text, "\nUid:");
    long uid = -1;
    if (!u || sscanf(u + 5, "%ld", &uid) != 1 || uid < 0) {
        free(text);
        return NULL;
    }
    free(text);
    char *pw = NULL, *name = NULL;
    if (!passwd && hostfs_read_file(fs, "/etc/passwd", 0, &pw, NULL) != 0)
        pw = NULL;
    name = procinfo_passwd_name(passwd ? passwd : pw, uid);
    free(pw);
    return name ? name : str_printf("uid %ld", uid);
}

char *procinfo_comm(const struct hostfs *fs, long pid)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
    if (hostfs_read_attr(fs, path, &text) != 0)
        return NULL;
    return str_sanitize(text);
}

void procinfo_started(const struct hostfs *fs, long pid, char *out, size_t size)
{
    out[0] = '\0';
    unsigned long long ticks = 0;
    char *stat = NULL;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || procinfo_stat(fs, pid, &ticks) < 0 || hostfs_read_file(fs, "/proc/stat", 0, &stat, NULL) != 0)
        return;
    const char *b = strstr(stat, "\nbtime ");
    long long btime = 0;
    if (b && sscanf(b + 7, "%lld", &btime) == 1 && btime > 0) {
        time_t t = (time_t)(btime + (long long)(ticks / (unsigned long long)hz));
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(out, size, "%Y-%m-%d %H:%M UTC", &tm);
    }
    free(stat);
}
