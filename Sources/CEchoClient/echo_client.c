#include "echo_client.h"

#include <dbus/dbus.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ECHO_DESTINATION "org.earshot.Echo1"
#define ECHO_PATH "/org/earshot/Echo1"
#define ECHO_INTERFACE "org.earshot.Echo1"

/* libdbus's customary default, the same the Swift binding uses. */
#define CALL_TIMEOUT_MS 25000
/* How long earshot_c_receive_signals waits for everything to arrive. */
#define SIGNALS_TIMEOUT_NS (300ull * 1000000000ull)

struct earshot_c_client {
    DBusConnection *connection;
    char unique_name[256];
    char error[1024];
};

static void format_error(char *buffer, size_t size, const char *format, va_list args) {
    if (buffer == NULL || size == 0) return;
    vsnprintf(buffer, size, format, args);
}

static void set_error(earshot_c_client *client, const char *format, ...) {
    va_list args;
    va_start(args, format);
    format_error(client->error, sizeof client->error, format, args);
    va_end(args);
}

/* Whether `client` can make a call: it exists and its connection is open (its last error
 * cleared; set when it cannot). */
static int ready(earshot_c_client *client) {
    if (client == NULL) return 0;
    client->error[0] = '\0';
    if (client->connection == NULL) {
        set_error(client, "the connection is closed");
        return 0;
    }
    return 1;
}

static void write_error(char *buffer, size_t size, const char *format, ...) {
    va_list args;
    va_start(args, format);
    format_error(buffer, size, format, args);
    va_end(args);
}

static unsigned long long monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Reads the first argument of `message` as a byte array; returns its length or -1. */
static int byte_array_length(DBusMessage *message, DBusMessageIter *iter) {
    DBusMessageIter array;
    const unsigned char *bytes = NULL;
    int length = 0;
    if (!dbus_message_iter_init(message, iter)) return -1;
    if (dbus_message_iter_get_arg_type(iter) != DBUS_TYPE_ARRAY) return -1;
    if (dbus_message_iter_get_element_type(iter) != DBUS_TYPE_BYTE) return -1;
    dbus_message_iter_recurse(iter, &array);
    if (dbus_message_iter_get_arg_type(&array) == DBUS_TYPE_INVALID) return 0;  /* empty */
    dbus_message_iter_get_fixed_array(&array, &bytes, &length);
    return length;
}

/* MARK: Connecting */

earshot_c_client *earshot_c_connect(const char *address, char *error, size_t error_size) {
    DBusError failure;
    DBusConnection *connection;
    const char *unique;
    earshot_c_client *client;

    if (error != NULL && error_size > 0) error[0] = '\0';
    if (address == NULL) {
        write_error(error, error_size, "no bus address");
        return NULL;
    }
    client = calloc(1, sizeof *client);
    if (client == NULL) {
        write_error(error, error_size, "out of memory");
        return NULL;
    }

    dbus_error_init(&failure);
    connection = dbus_connection_open_private(address, &failure);
    if (connection == NULL) {
        write_error(error, error_size, "cannot open %s: %s", address,
                    dbus_error_is_set(&failure) ? failure.message : "unknown error");
        dbus_error_free(&failure);
        free(client);
        return NULL;
    }
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &failure)) {
        write_error(error, error_size, "cannot register with %s: %s", address,
                    dbus_error_is_set(&failure) ? failure.message : "unknown error");
        dbus_error_free(&failure);
        dbus_connection_close(connection);
        dbus_connection_unref(connection);
        free(client);
        return NULL;
    }
    unique = dbus_bus_get_unique_name(connection);
    snprintf(client->unique_name, sizeof client->unique_name, "%s", unique != NULL ? unique : "");
    client->connection = connection;
    return client;
}

void earshot_c_close(earshot_c_client *client) {
    if (client == NULL) return;
    if (client->connection != NULL) {
        dbus_connection_close(client->connection);
        dbus_connection_unref(client->connection);
        client->connection = NULL;
    }
    free(client);
}

const char *earshot_c_unique_name(const earshot_c_client *client) {
    return client != NULL ? client->unique_name : "";
}

const char *earshot_c_libdbus_version(void) {
    static char version[32];
    int major = 0, minor = 0, micro = 0;
    dbus_get_version(&major, &minor, &micro);
    snprintf(version, sizeof version, "%d.%d.%d", major, minor, micro);
    return version;
}

const char *earshot_c_last_error(const earshot_c_client *client) {
    return client != NULL ? client->error : "no client";
}

/* MARK: EchoBytes round-trips */

int earshot_c_echo_bytes(earshot_c_client *client, const unsigned char *data, int len) {
    static const unsigned char empty[1] = {0};
    DBusMessage *call, *reply;
    DBusMessageIter iter, array;
    DBusError failure;
    const unsigned char *bytes = (data != NULL) ? data : empty;
    int length;

    if (!ready(client)) return -1;
    if (len < 0 || (data == NULL && len > 0)) {
        set_error(client, "invalid payload (%d bytes)", len);
        return -1;
    }

    call = dbus_message_new_method_call(ECHO_DESTINATION, ECHO_PATH, ECHO_INTERFACE, "EchoBytes");
    if (call == NULL) {
        set_error(client, "out of memory building EchoBytes");
        return -1;
    }
    dbus_message_iter_init_append(call, &iter);
    if (!dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE_AS_STRING, &array)) {
        dbus_message_unref(call);
        set_error(client, "out of memory building EchoBytes");
        return -1;
    }
    if (!dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, len)) {
        dbus_message_iter_abandon_container(&iter, &array);
        dbus_message_unref(call);
        set_error(client, "out of memory appending %d bytes", len);
        return -1;
    }
    if (!dbus_message_iter_close_container(&iter, &array)) {
        dbus_message_unref(call);
        set_error(client, "out of memory building EchoBytes");
        return -1;
    }

    dbus_error_init(&failure);
    reply = dbus_connection_send_with_reply_and_block(client->connection, call, CALL_TIMEOUT_MS, &failure);
    dbus_message_unref(call);
    if (reply == NULL) {
        set_error(client, "EchoBytes failed: %s: %s",
                  dbus_error_is_set(&failure) ? failure.name : "org.freedesktop.DBus.Error.Failed",
                  dbus_error_is_set(&failure) ? failure.message : "no reply");
        dbus_error_free(&failure);
        return -1;
    }

    length = byte_array_length(reply, &iter);
    if (length < 0) {
        const char *signature = dbus_message_get_signature(reply);
        set_error(client, "EchoBytes replied with signature '%s', expected 'ay'", signature != NULL ? signature : "");
    }
    dbus_message_unref(reply);
    return length;
}

/* MARK: Property reads */

long long earshot_c_get_uint32(earshot_c_client *client, const char *destination, const char *path,
                               const char *interface, const char *property) {
    DBusMessage *call, *reply;
    DBusMessageIter iter, variant;
    DBusError failure;
    dbus_uint32_t value;

    if (!ready(client)) return -1;
    call = dbus_message_new_method_call(destination, path, DBUS_INTERFACE_PROPERTIES, "Get");
    if (call == NULL || !dbus_message_append_args(call, DBUS_TYPE_STRING, &interface, DBUS_TYPE_STRING, &property,
                                                  DBUS_TYPE_INVALID)) {
        if (call != NULL) dbus_message_unref(call);
        set_error(client, "out of memory building Get");
        return -1;
    }
    dbus_error_init(&failure);
    reply = dbus_connection_send_with_reply_and_block(client->connection, call, CALL_TIMEOUT_MS, &failure);
    dbus_message_unref(call);
    if (reply == NULL) {
        set_error(client, "Get %s failed: %s: %s", property,
                  dbus_error_is_set(&failure) ? failure.name : "org.freedesktop.DBus.Error.Failed",
                  dbus_error_is_set(&failure) ? failure.message : "no reply");
        dbus_error_free(&failure);
        return -1;
    }
    if (!dbus_message_iter_init(reply, &iter) || dbus_message_iter_get_arg_type(&iter) != DBUS_TYPE_VARIANT) {
        set_error(client, "Get %s replied without a variant", property);
        dbus_message_unref(reply);
        return -1;
    }
    dbus_message_iter_recurse(&iter, &variant);
    if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_UINT32) {
        set_error(client, "Get %s replied with type '%c', expected 'u'", property, dbus_message_iter_get_arg_type(&variant));
        dbus_message_unref(reply);
        return -1;
    }
    dbus_message_iter_get_basic(&variant, &value);
    dbus_message_unref(reply);
    return (long long)value;
}

/* MARK: Unicast signal throughput */

struct signal_run {
    unsigned size;
    dbus_uint32_t call_serial;
    int call_sent;
    unsigned long received;
    int reply_seen;
    int failed;
    char error[512];
};

static void fail_run(struct signal_run *run, const char *format, ...) {
    va_list args;
    if (run->failed) return;  /* keep the first failure */
    run->failed = 1;
    va_start(args, format);
    format_error(run->error, sizeof run->error, format, args);
    va_end(args);
}

static DBusHandlerResult signal_filter(DBusConnection *connection, DBusMessage *message, void *data) {
    struct signal_run *run = data;
    int type = dbus_message_get_type(message);
    (void)connection;

    if (type == DBUS_MESSAGE_TYPE_SIGNAL && dbus_message_is_signal(message, ECHO_INTERFACE, "Bytes")) {
        DBusMessageIter iter;
        dbus_uint64_t sequence = 0;
        int length = byte_array_length(message, &iter);
        if (length < 0 || !dbus_message_iter_next(&iter) ||
            dbus_message_iter_get_arg_type(&iter) != DBUS_TYPE_UINT64) {
            const char *signature = dbus_message_get_signature(message);
            fail_run(run, "Bytes signal with signature '%s', expected 'ayt'", signature != NULL ? signature : "");
            return DBUS_HANDLER_RESULT_HANDLED;
        }
        dbus_message_iter_get_basic(&iter, &sequence);
        if ((unsigned)length != run->size) {
            fail_run(run, "Bytes signal %llu carries %d bytes, expected %u",
                     (unsigned long long)sequence, length, run->size);
        } else if (sequence != (dbus_uint64_t)run->received) {
            fail_run(run, "Bytes signal sequence %llu arrived where %lu was expected (gap or reorder)",
                     (unsigned long long)sequence, run->received);
        }
        run->received++;
        return DBUS_HANDLER_RESULT_HANDLED;
    }

    if ((type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) && run->call_sent &&
        dbus_message_get_reply_serial(message) == run->call_serial) {
        run->reply_seen = 1;
        if (type == DBUS_MESSAGE_TYPE_ERROR) {
            const char *text = "";
            DBusMessageIter iter;
            if (dbus_message_iter_init(message, &iter) && dbus_message_iter_get_arg_type(&iter) == DBUS_TYPE_STRING) {
                dbus_message_iter_get_basic(&iter, &text);
            }
            fail_run(run, "EmitBytes failed: %s: %s", dbus_message_get_error_name(message), text);
        }
        return DBUS_HANDLER_RESULT_HANDLED;
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

long earshot_c_receive_signals(earshot_c_client *client, unsigned count, unsigned size) {
    struct signal_run run;
    DBusMessage *call;
    dbus_uint32_t count_arg = count, size_arg = size;
    unsigned long long deadline;

    if (!ready(client)) return -1;

    memset(&run, 0, sizeof run);
    run.size = size;

    call = dbus_message_new_method_call(ECHO_DESTINATION, ECHO_PATH, ECHO_INTERFACE, "EmitBytes");
    if (call == NULL ||
        !dbus_message_append_args(call, DBUS_TYPE_UINT32, &count_arg, DBUS_TYPE_UINT32, &size_arg, DBUS_TYPE_INVALID)) {
        if (call != NULL) dbus_message_unref(call);
        set_error(client, "out of memory building EmitBytes");
        return -1;
    }
    if (!dbus_connection_add_filter(client->connection, signal_filter, &run, NULL)) {
        dbus_message_unref(call);
        set_error(client, "out of memory adding a filter");
        return -1;
    }
    if (!dbus_connection_send(client->connection, call, &run.call_serial)) {
        dbus_message_unref(call);
        dbus_connection_remove_filter(client->connection, signal_filter, &run);
        set_error(client, "out of memory sending EmitBytes");
        return -1;
    }
    run.call_sent = 1;
    dbus_message_unref(call);

    deadline = monotonic_ns() + SIGNALS_TIMEOUT_NS;
    while (!run.failed && (run.received < count || !run.reply_seen)) {
        if (!dbus_connection_read_write_dispatch(client->connection, 1000)) {
            fail_run(&run, "disconnected after %lu of %u signals", run.received, count);
            break;
        }
        if (monotonic_ns() > deadline) {
            fail_run(&run, "timed out after %lu of %u signals (reply %s)", run.received, count,
                     run.reply_seen ? "received" : "missing");
            break;
        }
    }
    dbus_connection_remove_filter(client->connection, signal_filter, &run);

    if (run.failed) {
        set_error(client, "%s", run.error);
        return -1;
    }
    if (run.received != count) {
        set_error(client, "received %lu signals, expected %u", run.received, count);
        return -1;
    }
    return (long)run.received;
}
