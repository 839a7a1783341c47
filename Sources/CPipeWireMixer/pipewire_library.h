#ifndef EARSHOT_PIPEWIRE_LIBRARY_H
#define EARSHOT_PIPEWIRE_LIBRARY_H

/* libpipewire-0.3, opened when the first mixer is made instead of linked. A process that
   never attaches to a daemon (none answers, or --mixer none) then maps neither it nor the
   SPA plugins it loads; its probe needs no library at all. Once opened it stays.

   Every libpipewire function the mixer calls is listed once below: the table's members
   take their types from PipeWire's own declarations, and pipewire_mixer.c's calls go
   through the table by the same names (the redirects at the end). A call not listed fails
   to link, since nothing links libpipewire. */

#include <stddef.h>
#include <pipewire/pipewire.h>
#include <pipewire/impl-module.h>

#define EARSHOT_PW_FUNCTIONS(F) \
    F(pw_init) \
    F(pw_thread_loop_new) \
    F(pw_thread_loop_destroy) \
    F(pw_thread_loop_start) \
    F(pw_thread_loop_stop) \
    F(pw_thread_loop_lock) \
    F(pw_thread_loop_unlock) \
    F(pw_thread_loop_signal) \
    F(pw_thread_loop_get_loop) \
    F(pw_thread_loop_get_time) \
    F(pw_thread_loop_timed_wait_full) \
    F(pw_context_new) \
    F(pw_context_destroy) \
    F(pw_context_load_module) \
    F(pw_context_connect) \
    F(pw_core_disconnect) \
    F(pw_proxy_destroy) \
    F(pw_proxy_add_object_listener) \
    F(pw_properties_new) \
    F(pw_properties_set)

#define EARSHOT_PW_MEMBER(name) __typeof__(name) *name;
typedef struct earshot_pw_library {
    EARSHOT_PW_FUNCTIONS(EARSHOT_PW_MEMBER)
} earshot_pw_library;
#undef EARSHOT_PW_MEMBER

/* Filled by earshot_pw_library_open; read only after it has returned 0. */
extern earshot_pw_library earshot_pw;

/* Opens the library and resolves the table, once per process. 0 when it is usable; else
   -1, with the reason in `message` (NUL-terminated, at most `message_size` bytes). Safe
   from any thread. */
int earshot_pw_library_open(char *message, size_t message_size);

#ifndef EARSHOT_PW_LIBRARY_IMPLEMENTATION
#define pw_init earshot_pw.pw_init
#define pw_thread_loop_new earshot_pw.pw_thread_loop_new
#define pw_thread_loop_destroy earshot_pw.pw_thread_loop_destroy
#define pw_thread_loop_start earshot_pw.pw_thread_loop_start
#define pw_thread_loop_stop earshot_pw.pw_thread_loop_stop
#define pw_thread_loop_lock earshot_pw.pw_thread_loop_lock
#define pw_thread_loop_unlock earshot_pw.pw_thread_loop_unlock
#define pw_thread_loop_signal earshot_pw.pw_thread_loop_signal
#define pw_thread_loop_get_loop earshot_pw.pw_thread_loop_get_loop
#define pw_thread_loop_get_time earshot_pw.pw_thread_loop_get_time
#define pw_thread_loop_timed_wait_full earshot_pw.pw_thread_loop_timed_wait_full
#define pw_context_new earshot_pw.pw_context_new
#define pw_context_destroy earshot_pw.pw_context_destroy
#define pw_context_load_module earshot_pw.pw_context_load_module
#define pw_context_connect earshot_pw.pw_context_connect
#define pw_core_disconnect earshot_pw.pw_core_disconnect
#define pw_proxy_destroy earshot_pw.pw_proxy_destroy
#define pw_proxy_add_object_listener earshot_pw.pw_proxy_add_object_listener
#define pw_properties_new earshot_pw.pw_properties_new
#define pw_properties_set earshot_pw.pw_properties_set
#endif

#endif
