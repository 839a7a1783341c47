#ifndef EARSHOT_FILE_ACCESS_H
#define EARSHOT_FILE_ACCESS_H

#include <sys/types.h>

/* Opens `path` as open(2) would for the user `uid`: the calling thread takes that user's
   file-system identity (fsuid, fsgid from the password database, supplementary groups)
   for the open alone, so the kernel decides what that user may create or write, and the
   file created belongs to that user. Needs CAP_SETUID and CAP_SETGID (root) unless `uid`
   is the process's own. Only the calling thread's credentials change, and they are
   restored before it returns. Returns the descriptor, or -errno (-ESRCH: no such user;
   -EPERM: this process may not take that identity). */
int earshot_open_as_user(const char *path, int flags, mode_t mode, uid_t uid);

#endif
