#ifndef EARSHOT_CGCRYPT_SHIM_H
#define EARSHOT_CGCRYPT_SHIM_H
#include <gcrypt.h>

/* gcry_control is variadic, which Swift cannot call. Initialises libgcrypt for digests
   unless the process already did (libsystemd, which libdbus loads, may have): no secure
   memory, which digests of public data do not need. Returns the library's version. */
static inline const char *earshot_gcrypt_initialize(void) {
    const char *version = gcry_check_version(NULL);
    if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
        gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    }
    return version;
}
#endif
