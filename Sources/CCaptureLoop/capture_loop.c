#include "capture_loop.h"

#include <alsa/asoundlib.h>
#include <dbus/dbus.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void sleep_until(uint64_t deadline_ns) {
    struct timespec due = { (time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR) {}
}

/* Sends one chunk; returns 0, or -1 when libdbus ran out of memory. */
static int send_chunk(DBusConnection *connection, const char *destination, const unsigned char *data,
                      int size, dbus_uint64_t sequence, dbus_uint64_t monotonic_us) {
    DBusMessage *signal = dbus_message_new_signal("/org/earshot/Bench/CaptureLoop", "org.earshot.Bench.CaptureLoop",
                                                  "AudioPassThru");
    if (signal == NULL) return -1;
    int ok = dbus_message_set_destination(signal, destination);
    DBusMessageIter body, array;
    dbus_message_iter_init_append(signal, &body);
    ok = ok && dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE_AS_STRING, &array);
    ok = ok && dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &data, size);
    ok = ok && dbus_message_iter_close_container(&body, &array);
    ok = ok && dbus_message_iter_append_basic(&body, DBUS_TYPE_UINT64, &sequence);
    ok = ok && dbus_message_iter_append_basic(&body, DBUS_TYPE_UINT64, &monotonic_us);
    ok = ok && dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
    if (!ok) return -1;
    dbus_connection_flush(connection);
    return 0;
}

long earshot_capture_loop_run(const earshot_capture_loop_settings *settings, char *error, size_t error_size) {
    DBusError dbus_error;
    dbus_error_init(&dbus_error);
    DBusConnection *connection = dbus_connection_open_private(settings->address, &dbus_error);
    if (connection == NULL || !dbus_bus_register(connection, &dbus_error)) {
        snprintf(error, error_size, "cannot connect to %s: %s", settings->address, dbus_error.message);
        dbus_error_free(&dbus_error);
        if (connection != NULL) {
            dbus_connection_close(connection);
            dbus_connection_unref(connection);
        }
        return -1;
    }

    snd_pcm_t *pcm = NULL;
    int result = snd_pcm_open(&pcm, settings->device, SND_PCM_STREAM_CAPTURE, 0);
    snd_pcm_uframes_t chunk_frames = (snd_pcm_uframes_t)settings->rate * settings->chunk_ms / 1000;
    if (result >= 0) {
        /* The service's choice: a period of one chunk; four periods. */
        unsigned period_us = settings->chunk_ms * 1000;
        result = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, settings->channels,
                                    settings->rate, 0, period_us * 4);
    }
    size_t frame_bytes = 2 * (size_t)settings->channels;
    unsigned char *buffer = malloc(chunk_frames * frame_bytes);
    if (result < 0 || buffer == NULL) {
        snprintf(error, error_size, "cannot open %s: %s", settings->device, result < 0 ? snd_strerror(result) : "out of memory");
        if (pcm != NULL) snd_pcm_close(pcm);
        free(buffer);
        dbus_connection_close(connection);
        dbus_connection_unref(connection);
        return -1;
    }

    long sent = 0;
    uint64_t delivered = 0;
    uint64_t total = (uint64_t)settings->rate * settings->seconds;
    snd_pcm_start(pcm);
    uint64_t start = monotonic_ns();
    while (delivered < total && sent >= 0) {
        struct pollfd descriptors[8];
        int count = snd_pcm_poll_descriptors(pcm, descriptors, 8);
        if (count > 0) poll(descriptors, (nfds_t)count, 1000);
        snd_pcm_sframes_t frames = snd_pcm_readi(pcm, buffer, chunk_frames);
        if (frames < 0) {
            if (snd_pcm_recover(pcm, (int)frames, 1) < 0) {
                snprintf(error, error_size, "reading %s: %s", settings->device, snd_strerror((int)frames));
                sent = -1;
            }
            continue;
        }
        if (frames == 0) continue;
        delivered += (uint64_t)frames;
        if (send_chunk(connection, settings->destination, buffer, (int)(frames * frame_bytes), (dbus_uint64_t)sent,
                       monotonic_ns() / 1000) < 0) {
            snprintf(error, error_size, "libdbus is out of memory");
            sent = -1;
            break;
        }
        sent += 1;
        /* Drop whatever the bus sent us (nothing is expected). */
        dbus_connection_read_write(connection, 0);
        DBusMessage *incoming;
        while ((incoming = dbus_connection_pop_message(connection)) != NULL) dbus_message_unref(incoming);
        if (!settings->paced_by_device) sleep_until(start + delivered * 1000000000u / settings->rate);
    }

    snd_pcm_close(pcm);
    free(buffer);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return sent;
}
