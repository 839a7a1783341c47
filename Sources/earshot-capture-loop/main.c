/*
 * earshot-capture-loop: the capture benchmark's C reference, a process of its own with
 * nothing but libasound, libdbus and libc in it (as arecord is), so that its CPU time is
 * the loop's alone. See capture_loop.h for what it does per chunk.
 */
#include "capture_loop.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to) {
    fprintf(to,
            "usage: earshot-capture-loop --address ADDRESS --device PCM --destination NAME --seconds N\n"
            "                            [--rate HZ] [--channels N] [--chunk-ms MS] [--paced-by-device]\n"
            "Captures S16_LE audio from PCM for N seconds and sends each chunk to NAME on the bus at\n"
            "ADDRESS as one AudioPassThru-shaped signal (ay data, t sequence, t monotonicUs), in C.\n"
            "The capture benchmark (earshot-bench capture) runs it beside earshot-capture.\n"
            "  --rate HZ           sampling rate (default 16000)\n"
            "  --channels N        channels (default 1)\n"
            "  --chunk-ms MS       audio per signal (default 100)\n"
            "  --paced-by-device   the PCM delivers in real time (a live microphone): no pacing clock\n");
}

/* A positive number from `text`, or 0 when it is not one. */
static unsigned positive(const char *text) {
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || value == 0 || value > 1000000) return 0;
    return (unsigned)value;
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"address", required_argument, NULL, 'a'},  {"device", required_argument, NULL, 'd'},
        {"destination", required_argument, NULL, 'n'}, {"rate", required_argument, NULL, 'r'},
        {"channels", required_argument, NULL, 'c'}, {"chunk-ms", required_argument, NULL, 'm'},
        {"seconds", required_argument, NULL, 's'},  {"paced-by-device", no_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    earshot_capture_loop_settings settings = {.rate = 16000, .channels = 1, .chunk_ms = 100};
    int option;
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        unsigned *number = NULL;
        switch (option) {
        case 'a': settings.address = optarg; break;
        case 'd': settings.device = optarg; break;
        case 'n': settings.destination = optarg; break;
        case 'r': number = &settings.rate; break;
        case 'c': number = &settings.channels; break;
        case 'm': number = &settings.chunk_ms; break;
        case 's': number = &settings.seconds; break;
        case 'p': settings.paced_by_device = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (number != NULL && (*number = positive(optarg)) == 0) {
            fprintf(stderr, "earshot-capture-loop: --%s: '%s' is not a number from 1 to 1000000\n",
                    options[option == 'r' ? 3 : option == 'c' ? 4 : option == 'm' ? 5 : 6].name, optarg);
            return 2;
        }
    }
    if (optind < argc || settings.address == NULL || settings.device == NULL || settings.destination == NULL ||
        settings.seconds == 0) {
        fprintf(stderr, "earshot-capture-loop: --address, --device, --destination and --seconds are required\n");
        usage(stderr);
        return 2;
    }
    char error[512] = "";
    long sent = earshot_capture_loop_run(&settings, error, sizeof error);
    if (sent < 0) {
        fprintf(stderr, "earshot-capture-loop: %s\n", error);
        return 1;
    }
    printf("earshot-capture-loop: %ld chunks sent\n", sent);
    return 0;
}
