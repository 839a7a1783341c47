#ifndef EARSHOT_FILE_ACCESS_H
#define EARSHOT_FILE_ACCESS_H

#include <sys/types.h>

/* Opens `path` as open(2) would for the user `uid`: the calling thread takes that user's
   file-system identity (fsuid, fsgid from the password database, supplementary groups)
   for the open alone, so the kernel decides what that user may create or write, and the
   file created belongs to that user. Needs CAP_SETUID and CAP_SETGID (root) unless `uid`
   is the process's own. Only the calling thread's credentials change, and they are
   restored before it returns. Returns the descriptor, or -errno (-ESRCH: no such user;
   -ENOTSUP: this process may not take that identity). */
int earshot_open_as_user(const char *path, int flags, mode_t mode, uid_t uid);

/* Has earshot-open-as, listening on `socket_path`, open `path` as the user `uid` (not 0)
   and pass the descriptor back: for a service that may not take another user's identity
   itself. `caller` is the unique bus name of the call that named the path: the helper asks
   the system bus whether it runs as `uid`. `flags` as for open(2) (see
   earshot_open_as_protocol.h for those allowed). Returns the descriptor, or -errno:
   -EHOSTUNREACH when no helper listens there, -EPERM when the helper refuses to act as
   `uid` for `caller`, -EINVAL for what is not a regular file, -ETIMEDOUT when the helper
   does not answer within 10 s. */
int earshot_open_through_helper(const char *socket_path, uid_t uid, const char *caller, const char *path, int flags,
                                mode_t mode);

#endif
