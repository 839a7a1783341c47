#!/usr/bin/env python3
"""A program that asks the session to duck other audio and plays its own through the
PulseAudio API (pipewire-pulse), from this one process, as a navigation app would.

Arguments: a JSON object naming the call (`bus`, `path`, `interface`, `method`), its
request (string values as `s`, lists of strings as `as`), and the tone to play (`hertz`,
`seconds`). Prints "activated PATH" once the session answered, then plays, then exits.
"""
import ctypes
import json
import math
import struct
import sys

import dbus

call = json.loads(sys.argv[1])
bus = dbus.SessionBus()
manager = bus.get_object(call["bus"], call["path"])
request = dbus.Dictionary({key: dbus.Array(value, signature="s") if isinstance(value, list) else dbus.String(value)
                           for key, value in call["request"].items()}, signature="sv")
activation = getattr(manager, call["method"])(request, dbus_interface=call["interface"])
print("activated", activation, flush=True)


class SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32), ("channels", ctypes.c_uint8)]


PA_SAMPLE_S16LE, PA_STREAM_PLAYBACK, RATE = 3, 1, 48000
pulse = ctypes.CDLL("libpulse-simple.so.0")
pulse.pa_simple_new.restype = ctypes.c_void_p
pulse.pa_simple_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                ctypes.POINTER(SampleSpec), ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
pulse.pa_simple_write.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
pulse.pa_simple_drain.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
spec = SampleSpec(PA_SAMPLE_S16LE, RATE, 2)
error = ctypes.c_int(0)
stream = pulse.pa_simple_new(None, b"own-audio", PA_STREAM_PLAYBACK, None, b"own tone", ctypes.byref(spec), None, None,
                             ctypes.byref(error))
if not stream:
    sys.exit(f"pa_simple_new failed: {error.value}")
hertz, frames = call["hertz"], int(call["seconds"] * RATE)
chunk = RATE // 10
for start in range(0, frames, chunk):
    samples = [int(16384 * math.sin(2 * math.pi * hertz * n / RATE)) for n in range(start, min(frames, start + chunk))]
    data = b"".join(struct.pack("<hh", s, s) for s in samples)
    if pulse.pa_simple_write(stream, data, len(data), ctypes.byref(error)) < 0:
        sys.exit(f"pa_simple_write failed: {error.value}")
pulse.pa_simple_drain(stream, ctypes.byref(error))
