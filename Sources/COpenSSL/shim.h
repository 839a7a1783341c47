#ifndef EARSHOT_COPENSSL_SHIM_H
#define EARSHOT_COPENSSL_SHIM_H
#include <openssl/evp.h>
#endif
