/* earshot-open-as: opens files as the user an Earshot service serves.

   The services run sandboxed as the user "earshot" with no capabilities; a caller's
   `…Path` names a file in that caller's home or /tmp, which the service cannot see, and
   which must be opened with the caller's rights, not the service's. This helper does only
   that: systemd starts it for each connection to /run/earshot/open-as
   (earshot-open-as.socket, Accept=yes, the socket writable by the group "earshot" only),
   with the connection as standard input, as the user "earshot" holding CAP_SETUID and
   CAP_SETGID. For the first request it takes the requested user's identity (its groups,
   its gid, its uid) and drops both capabilities, for good; then it opens each requested
   path as that user, refuses anything but a regular file, and passes the descriptor back.
   It never opens a file as root, nor before it has become the user. */
#define _GNU_SOURCE
#include "earshot_open_as_protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Takes `uid`'s identity (supplementary groups, gid, uid) and drops every capability,
   ambient ones included. 0, or an errno value. */
static int become(uid_t uid) {
    struct passwd entry, *found = NULL;
    char text[16384];
    if (getpwuid_r(uid, &entry, text, sizeof(text), &found) != 0 || found == NULL) return ESRCH;
    int count = 256;
    gid_t groups[256];
    if (getgrouplist(entry.pw_name, entry.pw_gid, groups, &count) < 0) return E2BIG;
    if (setgroups((size_t)count, groups) != 0) return EPERM;
    if (setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid) != 0) return EPERM;
    if (setresuid(uid, uid, uid) != 0) return EPERM;
    /* Moving between two users other than root keeps capabilities: drop them here. */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return EPERM;
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof(none));
    if (syscall(SYS_capset, &header, none) != 0) return EPERM;
    struct __user_cap_data_struct left[2];
    if (syscall(SYS_capget, &header, left) != 0) return EPERM;
    for (int i = 0; i < 2; i++) {
        if (left[i].permitted || left[i].effective || left[i].inheritable) return EPERM;
    }
    return 0;
}

/* Opens `path` as the user this process now is: a regular file only, never blocking on a
   FIFO. The descriptor, or -errno. */
static int open_as_user(const char *path, int flags, mode_t mode) {
    int fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
    if (fd < 0) return -errno;
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        close(fd);
        return -EIO;
    }
    return fd;
}

static void reply(int connection, int32_t error, int fd) {
    struct iovec part = { .iov_base = &error, .iov_len = sizeof(error) };
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
    if (fd >= 0) {
        memset(&control, 0, sizeof(control));
        message.msg_control = control.bytes;
        message.msg_controllen = sizeof(control.bytes);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    while (sendmsg(connection, &message, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

int main(void) {
    const int connection = 0;
    /* Only the services' user (this helper's own) or root may ask. */
    struct ucred peer;
    socklen_t length = sizeof(peer);
    if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
        fprintf(stderr, "earshot-open-as: standard input is not a connection: %s\n", strerror(errno));
        return 1;
    }
    if (peer.uid != getuid() && peer.uid != 0) {
        fprintf(stderr, "earshot-open-as: refused a connection from uid %u\n", (unsigned)peer.uid);
        return 1;
    }
    uid_t user = 0;
    for (;;) {
        char packet[sizeof(earshot_open_as_request) + EARSHOT_OPEN_AS_PATH_MAX + 1];
        ssize_t size = recv(connection, packet, sizeof(packet), 0);
        if (size < 0 && errno == EINTR) continue;
        if (size <= 0) return 0;
        earshot_open_as_request request;
        if ((size_t)size <= sizeof(request) || (size_t)size > sizeof(request) + EARSHOT_OPEN_AS_PATH_MAX) {
            reply(connection, EINVAL, -1);
            continue;
        }
        memcpy(&request, packet, sizeof(request));
        size_t path_length = (size_t)size - sizeof(request);
        char path[EARSHOT_OPEN_AS_PATH_MAX + 1];
        memcpy(path, packet + sizeof(request), path_length);
        path[path_length] = 0;
        if (request.version != EARSHOT_OPEN_AS_VERSION || strlen(path) != path_length || path[0] != '/'
            || (request.flags & ~EARSHOT_OPEN_AS_FLAGS) != 0) {
            reply(connection, EINVAL, -1);
            continue;
        }
        if (request.uid == 0 || (user != 0 && request.uid != user)) {
            reply(connection, EPERM, -1);
            continue;
        }
        if (user == 0) {
            int failed = become((uid_t)request.uid);
            if (failed != 0) {
                fprintf(stderr, "earshot-open-as: cannot become uid %u: %s\n", request.uid, strerror(failed));
                reply(connection, failed, -1);
                return 1;
            }
            user = (uid_t)request.uid;
        }
        int fd = open_as_user(path, request.flags, (mode_t)(request.mode & 0666));
        if (fd < 0) {
            reply(connection, -fd, -1);
        } else {
            reply(connection, 0, fd);
            close(fd);
        }
    }
}
