#ifndef EARSHOT_ECHO_CLIENT_H
#define EARSHOT_ECHO_CLIENT_H

/*
 * A minimal libdbus client of org.earshot.Echo1, written directly against libdbus.
 * It is the reference peer of the D-Bus benchmark: the Swift binding is compared with it.
 *
 * The client is single-threaded: use one client from one thread at a time.
 * libdbus itself stays out of this header; the client is an opaque handle.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct earshot_c_client earshot_c_client;

/*
 * Opens a private connection to the bus at `address` and registers with it (Hello).
 * Returns NULL on failure, with a message written to `error` (when not NULL; at most
 * `error_size` bytes including the terminating NUL).
 */
earshot_c_client *earshot_c_connect(const char *address, char *error, size_t error_size);

/* Closes the connection and frees the client. NULL is ignored. */
void earshot_c_close(earshot_c_client *client);

/* The bus-assigned unique name, e.g. ":1.42". */
const char *earshot_c_unique_name(const earshot_c_client *client);

/* The version of the libdbus this client runs against, e.g. "1.14.10". */
const char *earshot_c_libdbus_version(void);

/* The message of the last failed call ("" if none). Valid until the next call. */
const char *earshot_c_last_error(const earshot_c_client *client);

/*
 * Calls org.earshot.Echo1.EchoBytes(ay) -> ay with `len` bytes from `data` and blocks
 * until the reply arrives (25 s timeout). Returns the length of the returned byte array,
 * or -1 on failure (see earshot_c_last_error).
 */
int earshot_c_echo_bytes(earshot_c_client *client, const unsigned char *data, int len);

/*
 * Calls org.earshot.Echo1.EmitBytes(u count, u size) without blocking for the reply and
 * dispatches incoming messages until `count` Bytes(ay, t) signals and the reply have
 * arrived. Checks that every signal carries `size` bytes and that the sequence numbers
 * run 0, 1, 2, ... without gaps. Returns the number of signals received (== count), or
 * -1 on failure, a gap, a disconnection or after 300 s (see earshot_c_last_error).
 */
long earshot_c_receive_signals(earshot_c_client *client, unsigned count, unsigned size);

/*
 * Reads a `u` property with org.freedesktop.DBus.Properties.Get, blocking until the reply
 * (25 s timeout): the call a typed client's property read makes, for any service.
 * Returns the value, or -1 on failure or another type (see earshot_c_last_error).
 */
long long earshot_c_get_uint32(earshot_c_client *client, const char *destination, const char *path,
                               const char *interface, const char *property);

#ifdef __cplusplus
}
#endif

#endif /* EARSHOT_ECHO_CLIENT_H */
