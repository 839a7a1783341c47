#ifndef EARSHOT_CNETTLE_SHIM_H
#define EARSHOT_CNETTLE_SHIM_H
/* Nettle's hash functions (GnuTLS's cryptographic library): plain functions over a
   context the caller holds, with no global initialisation; and HMAC and PBKDF2 over
   SHA-256, for password verifiers. */
#include <nettle/sha2.h>
#include <nettle/hmac.h>
#include <nettle/pbkdf2.h>
#endif
