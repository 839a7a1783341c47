#ifndef EARSHOT_OPEN_AS_PROTOCOL_H
#define EARSHOT_OPEN_AS_PROTOCOL_H

#include <stdint.h>

/* What the services and earshot-open-as say to each other over its socket (a
   SOCK_SEQPACKET connection, one packet per message).

   A request is this header followed by the caller's unique bus name and then the path
   (`caller_length` and the rest of the packet's bytes; neither with a terminating NUL).
   The reply is one int32_t: 0 with the descriptor attached (SCM_RIGHTS), or an errno
   value. Every request of one connection names the same user and caller.

   The helper believes neither the uid nor the name: it asks the system bus which user the
   connection with that unique name runs as, and opens nothing unless the bus says `uid`,
   an ordinary user's (UID_MIN to UID_MAX of /etc/login.defs) other than its own. */
typedef struct {
    uint32_t version;       /* EARSHOT_OPEN_AS_VERSION */
    uint32_t uid;           /* the user to open as: never 0 */
    int32_t flags;          /* O_RDONLY or O_WRONLY, with O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW */
    uint32_t mode;          /* for O_CREAT; only the read and write bits are kept */
    uint32_t caller_length; /* bytes of the caller's unique bus name (":1.42") after the header */
} earshot_open_as_request;

#define EARSHOT_OPEN_AS_VERSION 2u
/* The longest bus name (the D-Bus specification's limit). */
#define EARSHOT_OPEN_AS_CALLER_MAX 255
/* The flags a request may carry; the helper adds O_CLOEXEC and O_NOCTTY. */
#define EARSHOT_OPEN_AS_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW)
#define EARSHOT_OPEN_AS_PATH_MAX 4095
/* Where the system's earshot-open-as.socket listens. */
#define EARSHOT_OPEN_AS_SOCKET "/run/earshot/open-as"

#endif
