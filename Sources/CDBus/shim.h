#ifndef EARSHOT_CDBUS_SHIM_H
#define EARSHOT_CDBUS_SHIM_H
#include <dbus/dbus.h>
/* The I/O thread's wake-up descriptor; Glibc's Swift module does not export eventfd. */
#include <sys/eventfd.h>

/* libdbus's type codes are macros with casts, which Swift does not import. */
static const int EARSHOT_DBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int EARSHOT_DBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int EARSHOT_DBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int EARSHOT_DBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int EARSHOT_DBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int EARSHOT_DBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int EARSHOT_DBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int EARSHOT_DBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int EARSHOT_DBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int EARSHOT_DBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int EARSHOT_DBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int EARSHOT_DBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int EARSHOT_DBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int EARSHOT_DBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int EARSHOT_DBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int EARSHOT_DBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int EARSHOT_DBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int EARSHOT_DBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
#endif
