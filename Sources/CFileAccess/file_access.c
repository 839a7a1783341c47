#define _GNU_SOURCE
#include "earshot_file_access.h"
#include "earshot_open_as_protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
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
        result = -ENOTSUP;
    } else {
        uid_t old_uid = (uid_t)setfsuid(uid);
        gid_t old_gid = (gid_t)setfsgid(gid);
        /* setfsuid reports no failure: check that it took. */
        if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
            result = -ENOTSUP;
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

int earshot_open_through_helper(const char *socket_path, uid_t uid, const char *caller, const char *path, int flags,
                                mode_t mode) {
    size_t path_length = strlen(path), caller_length = strlen(caller);
    if (path_length == 0 || path_length > EARSHOT_OPEN_AS_PATH_MAX) return -ENAMETOOLONG;
    if (caller_length == 0 || caller_length > EARSHOT_OPEN_AS_CALLER_MAX) return -EINVAL;
    int connection = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (connection < 0) return -errno;
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket_path);
    if (connect(connection, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int error = errno;
        close(connection);
        return -(error == ENOENT || error == ECONNREFUSED ? EHOSTUNREACH : error);
    }
    /* The helper is started for this connection: a stuck one must not hold a call forever. */
    struct timeval limit = { .tv_sec = 10 };
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    earshot_open_as_request request = {
        .version = EARSHOT_OPEN_AS_VERSION, .uid = uid, .flags = flags & ~O_CLOEXEC, .mode = mode,
        .caller_length = (uint32_t)caller_length
    };
    char packet[sizeof(request) + EARSHOT_OPEN_AS_CALLER_MAX + EARSHOT_OPEN_AS_PATH_MAX];
    memcpy(packet, &request, sizeof(request));
    memcpy(packet + sizeof(request), caller, caller_length);
    memcpy(packet + sizeof(request) + caller_length, path, path_length);
    if (send(connection, packet, sizeof(request) + caller_length + path_length, MSG_NOSIGNAL) < 0) {
        int error = errno;
        close(connection);
        return -error;
    }
    int32_t answer = EIO;
    struct iovec part = { .iov_base = &answer, .iov_len = sizeof(answer) };
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.bytes,
                              .msg_controllen = sizeof(control.bytes) };
    ssize_t size;
    do {
        size = recvmsg(connection, &message, MSG_CMSG_CLOEXEC);
    } while (size < 0 && errno == EINTR);
    int error = size < 0 ? errno : 0;
    close(connection);
    if (size < 0) return -(error == EAGAIN ? ETIMEDOUT : error);
    if (size != sizeof(answer)) return -EPROTO;
    int fd = -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(header), sizeof(int));
    }
    if (answer != 0) {
        if (fd >= 0) close(fd);
        return -answer;
    }
    return fd >= 0 ? fd : -EPROTO;
}
