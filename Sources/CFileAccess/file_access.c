#define _GNU_SOURCE
#include "earshot_file_access.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's setgroups changes every thread of the process; the system call changes only
   the calling thread's credentials. */
static int thread_setgroups(size_t count, const gid_t *groups) {
    return (int)syscall(SYS_setgroups, count, groups);
}

int earshot_open_as_user(const char *path, int flags, mode_t mode, uid_t uid) {
    if (uid == geteuid()) {
        int fd = open(path, flags, mode);
        return fd >= 0 ? fd : -errno;
    }
    struct passwd entry, *found = NULL;
    char text[4096];
    if (getpwuid_r(uid, &entry, text, sizeof(text), &found) != 0 || found == NULL) return -ESRCH;
    gid_t gid = entry.pw_gid;
    int count = 64;
    gid_t *groups = malloc(sizeof(gid_t) * (size_t)count);
    if (!groups) return -ENOMEM;
    if (getgrouplist(entry.pw_name, gid, groups, &count) < 0) {
        gid_t *larger = realloc(groups, sizeof(gid_t) * (size_t)count);
        if (!larger) {
            free(groups);
            return -ENOMEM;
        }
        groups = larger;
        if (getgrouplist(entry.pw_name, gid, groups, &count) < 0) {
            free(groups);
            return -ENOMEM;
        }
    }
    int saved_count = getgroups(0, NULL);
    gid_t *saved = malloc(sizeof(gid_t) * (size_t)(saved_count > 0 ? saved_count : 1));
    if (!saved || (saved_count > 0 && getgroups(saved_count, saved) < 0)) {
        free(groups);
        free(saved);
        return -ENOMEM;
    }
    int result;
    if (thread_setgroups((size_t)count, groups) != 0) {
        result = -EPERM;
    } else {
        uid_t old_uid = (uid_t)setfsuid(uid);
        gid_t old_gid = (gid_t)setfsgid(gid);
        /* setfsuid reports no failure: check that it took. */
        if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
            result = -EPERM;
        } else {
            int fd = open(path, flags, mode);
            result = fd >= 0 ? fd : -errno;
        }
        setfsuid(old_uid);
        setfsgid(old_gid);
        thread_setgroups((size_t)(saved_count > 0 ? saved_count : 0), saved);
    }
    free(groups);
    free(saved);
    return result;
}
