#ifndef EARSHOT_ALLOCATOR_TUNABLES_H
#define EARSHOT_ALLOCATOR_TUNABLES_H

/* glibc's allocator as the services run it (see AllocatorTunables in EarshotService for
   why): per-thread caches off, at most two arenas. glibc reads these settings from
   GLIBC_TUNABLES only when a program starts, so a process lacking them starts itself
   again, once, with them added. */

/* The environment variable glibc reads the settings from. */
extern const char *const earshot_tunables_variable;
/* Set for the second start only, so that there is never a third. */
extern const char *const earshot_tunables_restarted_variable;

/* What GLIBC_TUNABLES should become given its current value (NULL when unset): the
   settings it names, empty ones left out, then those of ours it does not name. NULL when
   it names all of ours already (or when out of memory, so that the program starts as it
   is). The result is the caller's to free. */
char *earshot_tunables_adding(const char *current);

/* Unless GLIBC_TUNABLES names every setting already, executes this program again (its
   own file, so that it keeps its name) with `argv` and the missing settings added.
   Returns when that is not needed or not possible (no /proc, a set-uid start, where the
   loader would drop the setting). Decides once per process image: later calls return at
   once. */
void earshot_allocator_tunables_apply(char **argv);

#endif
