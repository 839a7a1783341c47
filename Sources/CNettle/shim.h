#ifndef EARSHOT_CNETTLE_SHIM_H
#define EARSHOT_CNETTLE_SHIM_H
/* Nettle's hash functions (GnuTLS's cryptographic library): plain functions over a
   context the caller holds, with no global initialisation. */
#include <nettle/sha2.h>
#endif
