#!/usr/bin/python3
"""Record a voice memo with Earshot from Python, and keep it as a piece.

A spoken prompt asks for the memo; the microphone's PCM arrives through a pipe
(OpenStream) until the speaker falls silent or the time is up; the memo is written as a
WAV file and dropped into the piece store by file descriptor.

Needs dbus-python (Debian: python3-dbus). Uses the session bus (DBUS_SESSION_BUS_ADDRESS),
or the system bus with --system.
"""

import argparse
import os
import sys
import tempfile
import time
import wave

import dbus

RATE = 16000
BYTES_PER_FRAME = 2  # 16-bit mono

CAPTURE = ("org.earshot.Capture1", "/org/earshot/Capture1")
PIECES = ("org.earshot.Pieces1", "/org/earshot/Pieces1")


def record(bus, prompt, max_ms, silence_ms):
    """The memo's PCM and the pass-thru's result code and reason."""
    capture = dbus.Interface(bus.get_object(*CAPTURE), "org.earshot.Capture1")
    request = dbus.Dictionary({
        "SamplingRate": dbus.UInt32(RATE),
        "BitsPerSample": dbus.UInt32(16),
        "AudioType": "PCM",
        "MaxDuration": dbus.UInt32(max_ms),
        "InitialPrompt": dbus.Array([dbus.Struct(("TEXT", prompt))], signature="(ss)"),
        "EndOnSilenceMs": dbus.UInt32(silence_ms),
        # The audio only through the pipe: no signal per chunk, no main loop needed.
        "Delivery": "stream",
    }, signature="sv")
    path = capture.PerformAudioPassThru(request)
    passthru_object = bus.get_object(CAPTURE[0], path)
    passthru = dbus.Interface(passthru_object, "org.earshot.Capture1.PassThru")
    # Called at once: the prompt is still being spoken, so no audio has been read yet.
    fd = passthru.OpenStream().take()
    chunks = []
    with os.fdopen(fd, "rb") as stream:
        # The service closes the pipe when the pass-thru ends.
        while chunk := stream.read(65536):
            chunks.append(chunk)
    properties = dbus.Interface(passthru_object, "org.freedesktop.DBus.Properties")
    result = properties.Get("org.earshot.Capture1.PassThru", "ResultCode")
    while not result:  # the pipe can close a moment before the result is set
        time.sleep(0.01)
        result = properties.Get("org.earshot.Capture1.PassThru", "ResultCode")
    return b"".join(chunks), str(result)


def keep(bus, pcm, title):
    """Drops the memo into the piece store; returns the piece's id."""
    pieces = dbus.Interface(bus.get_object(*PIECES), "org.earshot.Pieces1")
    with tempfile.TemporaryFile() as file:
        with wave.open(file, "wb") as memo:
            memo.setnchannels(1)
            memo.setsampwidth(BYTES_PER_FRAME)
            memo.setframerate(RATE)
            memo.writeframes(pcm)
        file.seek(0)
        return str(pieces.Drop(dbus.Dictionary({
            "Title": title,
            "MixStem": dbus.types.UnixFd(file.fileno()),
        }, signature="sv")))


def main():
    parser = argparse.ArgumentParser(description="Record a voice memo and keep it as a piece.")
    parser.add_argument("--system", action="store_true", help="use the system bus")
    parser.add_argument("--prompt", default="Say your memo", help="what is spoken first")
    parser.add_argument("--max-ms", type=int, default=30000, help="the longest memo, in ms")
    parser.add_argument("--silence-ms", type=int, default=1500, help="silence that ends the memo, in ms")
    args = parser.parse_args()

    bus = dbus.SystemBus() if args.system else dbus.SessionBus()
    try:
        pcm, result = record(bus, args.prompt, args.max_ms, args.silence_ms)
        if not pcm:
            print(f"{result}: nothing was recorded", file=sys.stderr)
            return 1
        piece = keep(bus, pcm, time.strftime("Memo %H:%M"))
    except dbus.DBusException as error:
        print(f"{error.get_dbus_name()}: {error.get_dbus_message()}", file=sys.stderr)
        return 1
    print(f"{result}: {len(pcm) // (RATE * BYTES_PER_FRAME // 1000)} ms kept as piece {piece}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
