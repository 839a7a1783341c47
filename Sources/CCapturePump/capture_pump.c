#include "capture_pump.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void earshot_pump_flag_raise(earshot_pump_flag *flag) {
    __atomic_store_n(&flag->value, 1, __ATOMIC_RELEASE);
}

int earshot_pump_flag_take(earshot_pump_flag *flag) {
    if (!__atomic_load_n(&flag->value, __ATOMIC_RELAXED)) return 0;
    return __atomic_exchange_n(&flag->value, 0, __ATOMIC_ACQUIRE);
}

int earshot_pump_flag_is_raised(const earshot_pump_flag *flag) {
    return __atomic_load_n(&flag->value, __ATOMIC_ACQUIRE);
}

uint64_t earshot_frame_count_load(const earshot_frame_count *count) {
    return __atomic_load_n(&count->value, __ATOMIC_RELAXED);
}

void earshot_frame_count_store(earshot_frame_count *count, uint64_t value) {
    __atomic_store_n(&count->value, value, __ATOMIC_RELAXED);
}

void earshot_frame_count_add(earshot_frame_count *count, uint64_t frames) {
    __atomic_fetch_add(&count->value, frames, __ATOMIC_RELAXED);
}

/* Writes all of bytes to fd; returns how many it took, and sets *error to the errno of a
 * failed write (0 when the descriptor was only full). */
static unsigned long write_all(int fd, const unsigned char *bytes, unsigned long count, int *error) {
    unsigned long done = 0;
    *error = 0;
    while (done < count) {
        ssize_t written = write(fd, bytes + done, count - done);
        if (written > 0) {
            done += (unsigned long)written;
            continue;
        }
        if (written < 0 && errno == EINTR) continue;
        if (written < 0 && errno != EAGAIN) *error = errno;
        break;
    }
    return done;
}

int earshot_pump_write(earshot_pump *pump, unsigned long frames) {
    unsigned long taken = frames < pump->frames_left ? frames : (unsigned long)pump->frames_left;
    unsigned long bytes = taken * pump->frame_bytes;
    pump->frames_left -= taken;
    earshot_frame_count_add(pump->counter, taken);
    for (int index = 0; index < pump->descriptor_count && bytes > 0; index++) {
        int error;
        unsigned long written = write_all(pump->descriptors[index], pump->buffer, bytes, &error);
        if (written < bytes) {
            pump->unfinished_bytes = bytes;
            pump->unfinished_frames = taken;
            pump->unfinished_index = index;
            pump->unfinished_written = written;
            pump->unfinished_error = error;
            return EARSHOT_PUMP_UNFINISHED;
        }
    }
    pump->frames_written += taken;
    return pump->frames_left == 0 ? EARSHOT_PUMP_LIMIT : 0;
}
