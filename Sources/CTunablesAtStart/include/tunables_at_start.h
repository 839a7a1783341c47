#ifndef EARSHOT_TUNABLES_AT_START_H
#define EARSHOT_TUNABLES_AT_START_H

/* Nothing to call: a program linked with this target applies the allocator tunables
   (earshot_allocator_tunables_apply) from a constructor that runs before its own code and
   the Swift runtime's, so that a start without them costs as little as possible before
   the second. */

#endif
