/* earshot-open-as: opens files as the user an Earshot service serves.

   The services run sandboxed as the user "earshot" with no capabilities; a caller's
   `…Path` names a file in that caller's home or /tmp, which the service cannot see, and
   which must be opened with the caller's rights, not the service's. This helper does only
   that: systemd starts it for each connection to /run/earshot/open-as
   (earshot-open-as.socket, Accept=yes, the socket writable by the group "earshot" only),
   with the connection as standard input, as the user "earshot" holding CAP_SETUID and
   CAP_SETGID. It believes nothing the service says of whom it serves: a request names the
   user and the unique bus name of the call that named the path, and the helper asks the
   system bus which user that connection runs as. Unless the bus says the requested user,
   an ordinary one (UID_MIN to UID_MAX of /etc/login.defs, not its own), it refuses; so a
   service, even one that has been taken over, can act only for a user who is on the bus
   as it asks. For the first request it then takes the user's identity (its groups, its
   gid, its uid) and drops both capabilities, for good; then it opens each requested path
   as that user, refuses anything but a regular file, and passes the descriptor back. It
   never opens a file as root, nor before it has become the user. */
#define _GNU_SOURCE
#include "earshot_open_as_protocol.h"

#include <dbus/dbus.h>
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

/* The ordinary users' uids: UID_MIN and UID_MAX of /etc/login.defs (1000 and 60000 when
   it does not say). */
static void ordinary_uids(unsigned long *low, unsigned long *high) {
    *low = 1000;
    *high = 60000;
    FILE *defs = fopen("/etc/login.defs", "re");
    if (!defs) return;
    char line[256];
    while (fgets(line, sizeof(line), defs)) {
        unsigned long value;
        if (sscanf(line, " UID_MIN %lu", &value) == 1) *low = value;
        else if (sscanf(line, " UID_MAX %lu", &value) == 1) *high = value;
    }
    fclose(defs);
}

/* Whether this helper may act as `uid` for the call from the connection `caller` (a unique
   bus name): `uid` is an ordinary user's other than the helper's own, and the system bus
   says `caller` runs as `uid`. 0, or EPERM with the reason on standard error. */
static int may_act_for(uid_t uid, const char *caller) {
    unsigned long low, high;
    ordinary_uids(&low, &high);
    if (uid == getuid() || uid < low || uid > high) {
        fprintf(stderr, "earshot-open-as: refused uid %u: not an ordinary user's (%lu to %lu, not the services' own)\n",
                (unsigned)uid, low, high);
        return EPERM;
    }
    if (caller[0] != ':') {
        fprintf(stderr, "earshot-open-as: refused uid %u: '%s' is not a unique bus name\n", (unsigned)uid, caller);
        return EPERM;
    }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error);
    if (bus == NULL) {
        fprintf(stderr, "earshot-open-as: refused uid %u: cannot ask the system bus: %s\n", (unsigned)uid, error.message);
        dbus_error_free(&error);
        return EPERM;
    }
    dbus_connection_set_exit_on_disconnect(bus, FALSE);
    unsigned long owner = dbus_bus_get_unix_user(bus, caller, &error);
    int result = 0;
    if (dbus_error_is_set(&error)) {
        fprintf(stderr, "earshot-open-as: refused uid %u for %s: the bus does not know it (%s)\n", (unsigned)uid, caller,
                error.message);
        dbus_error_free(&error);
        result = EPERM;
    } else if (owner != (unsigned long)uid) {
        fprintf(stderr, "earshot-open-as: refused uid %u for %s: the bus says it runs as uid %lu\n", (unsigned)uid, caller, owner);
        result = EPERM;
    }
    dbus_connection_close(bus);
    dbus_connection_unref(bus);
    return result;
}

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
    char served[EARSHOT_OPEN_AS_CALLER_MAX + 1] = "";
    for (;;) {
        char packet[sizeof(earshot_open_as_request) + EARSHOT_OPEN_AS_CALLER_MAX + EARSHOT_OPEN_AS_PATH_MAX + 1];
        ssize_t size = recv(connection, packet, sizeof(packet), 0);
        if (size < 0 && errno == EINTR) continue;
        if (size <= 0) return 0;
        earshot_open_as_request request;
        if ((size_t)size <= sizeof(request)) {
            reply(connection, EINVAL, -1);
            continue;
        }
        memcpy(&request, packet, sizeof(request));
        size_t rest = (size_t)size - sizeof(request);
        if (request.version != EARSHOT_OPEN_AS_VERSION || request.caller_length == 0
            || request.caller_length > EARSHOT_OPEN_AS_CALLER_MAX || request.caller_length >= rest
            || rest - request.caller_length > EARSHOT_OPEN_AS_PATH_MAX) {
            reply(connection, EINVAL, -1);
            continue;
        }
        char caller[EARSHOT_OPEN_AS_CALLER_MAX + 1];
        memcpy(caller, packet + sizeof(request), request.caller_length);
        caller[request.caller_length] = 0;
        size_t path_length = rest - request.caller_length;
        char path[EARSHOT_OPEN_AS_PATH_MAX + 1];
        memcpy(path, packet + sizeof(request) + request.caller_length, path_length);
        path[path_length] = 0;
        if (strlen(caller) != request.caller_length || strlen(path) != path_length || path[0] != '/'
            || (request.flags & ~EARSHOT_OPEN_AS_FLAGS) != 0) {
            reply(connection, EINVAL, -1);
            continue;
        }
        if (request.uid == 0 || (user != 0 && (request.uid != user || strcmp(caller, served) != 0))) {
            reply(connection, EPERM, -1);
            continue;
        }
        /* Asked for every request: the caller's connection must still be on the bus. */
        int refused = may_act_for((uid_t)request.uid, caller);
        if (refused != 0) {
            reply(connection, refused, -1);
            continue;
        }
        if (user == 0) {
            snprintf(served, sizeof(served), "%s", caller);
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
