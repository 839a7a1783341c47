#include "tunables_at_start.h"

#include "allocator_tunables.h"

/* glibc passes a program's constructors its arguments and environment. The priority puts
   this one ahead of every other constructor of the executable (the Swift runtime's
   included); only the shared libraries' have run before it. */
__attribute__((constructor(101))) static void apply_tunables_at_start(int argc, char **argv, char **envp) {
    (void)argc;
    (void)envp;
    earshot_allocator_tunables_apply(argv);
}
