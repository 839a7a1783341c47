import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation

/// `earshot capture`: a microphone pass-thru into a WAV file, with a live level meter.
struct CaptureSubcommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Record from the microphone (Capture1.\(CaptureContract.Manager.performAudioPassThru.name)) into a WAV file.",
        discussion: """
            Starts a pass-thru, receives its audio chunks (sent only to this client) and writes \
            them behind a WAV header, with the pass-thru's channel count. While it runs, stderr \
            shows the elapsed time and a peak/RMS level meter when it is a terminal. Ctrl-C \
            cancels the pass-thru (ABORTED) and keeps what was captured; a second Ctrl-C quits \
            at once. Prints the result code, the reason and the number of frames.

            Exit status: 0 SUCCESS or WARNINGS; 4 any other result code (e.g. ABORTED after \
            Ctrl-C, RETRY); 3 org.earshot.Capture1 is not running (or left during the capture); \
            1 an error reply (e.g. org.earshot.Error.Rejected while another pass-thru runs) or a \
            file that cannot be written; 2 a usage error; 130 a second Ctrl-C.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Sampling rate: 8000, 16000, 22050, 44100 or 48000.", valueName: "Hz"))
    var rate: UInt32 = 16000

    @Option(help: ArgumentHelp("Bits per sample: 8 (unsigned) or 16 (signed little-endian).", valueName: "8|16"))
    var bits: UInt32 = 16

    @Option(name: .customLong("max-ms"), help: ArgumentHelp("The longest the capture may last (1..1000000).", valueName: "ms"))
    var maxMs: UInt32 = 10_000

    @Option(help: ArgumentHelp("The WAV file to write.", valueName: "path"))
    var out: String

    @Option(help: ArgumentHelp("Spoken (through org.earshot.Alerts1) before recording starts.", valueName: "text"))
    var prompt: String?

    @Option(name: .customLong("end-on-silence-ms"),
            help: ArgumentHelp("End with SUCCESS after this much silence following speech.", valueName: "ms"))
    var endOnSilenceMs: UInt32?

    @Option(name: .customLong("chunk-ms"), help: ArgumentHelp("Audio per chunk (10..1000, default 100).", valueName: "ms"))
    var chunkMs: UInt32?

    @Option(name: .customLong("display-text"), help: ArgumentHelp("A line the HMI shows during the capture.", valueName: "text"))
    var displayText: String?

    @Option(name: .customLong("noise-suppression"),
            help: ArgumentHelp("Suppress road noise in the audio: off, moderate or high (8000, 16000, 44100 or 48000 Hz).",
                               valueName: "level"))
    var noiseSuppression: String = "off"

    @Flag(name: .customLong("barge-in"),
          help: "With --prompt: record from the prompt's start, so you can talk over it; the prompt's sound is cancelled.")
    var bargeIn = false

    @Flag(name: .customLong("echo-cancel"),
          help: "Cancel what the speakers play (radio, navigation, prompts) from the audio; the service needs an echo reference (its --echo-reference).")
    var echoCancel = false

    @Flag(inversion: .prefixedNo,
          help: ArgumentHelp("Mute the other audio (the radio) while capturing (\(CaptureContract.Manager.Keys.muteAudio.name)); --no-mute-audio keeps it playing (with --echo-cancel, to hear the driver over it)."))
    var muteAudio = true

    @Flag(name: .customLong("no-meter"), help: "Do not show the level meter, even on a terminal.")
    var noMeter = false

    func validate() throws {
        guard bits == 8 || bits == 16 else { throw ValidationError("--bits must be 8 or 16, not \(bits)") }
        guard AudioPassThruRequest.NoiseSuppression(rawValue: noiseSuppression) != nil else {
            throw ValidationError("--noise-suppression must be off, moderate or high, not \(noiseSuppression)")
        }
    }

    var request: AudioPassThruRequest {
        var request = AudioPassThruRequest(samplingRate: rate, bitsPerSample: bits, maxDurationMs: maxMs)
        if let prompt { request.initialPrompt = [.text(prompt)] }
        request.endOnSilenceMs = endOnSilenceMs
        request.chunkMs = chunkMs
        request.displayText1 = displayText
        request.noiseSuppression = AudioPassThruRequest.NoiseSuppression(rawValue: noiseSuppression) ?? .off
        request.bargeIn = bargeIn
        request.echoCancel = echoCancel
        request.muteAudio = muteAudio
        return request
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.capture)
        let events = ClientEvents()
        defer { events.stop() }
        try await events.watch(.capture, on: client)
        let writer = try WaveWriter(path: out)
        // From here Ctrl-C is an event: one that comes during the call cancels the pass-thru
        // once its path is known.
        events.catchInterrupts()
        let passThru: PassThru
        do throws(ClientFailure) {
            passThru = try await client.with(.capture) { [request] in try await $0.capture.perform(request) }
        } catch {
            writer.discard()
            throw error
        }
        events.forward(passThru)
        let path = passThru.path
        let channels = try? await passThru.channels()

        let meter = options.json || noMeter || !Terminal.stderrIsTerminal ? nil : LevelMeter(bitsPerSample: bits)
        let bytesPerFrame = Double(channels ?? 1) * Double(bits / 8)
        var outcome: PassThruResult?
        var cancelled = false
        var nextSequence: UInt64 = 0
        var missing: UInt64 = 0
        if meter != nil { Terminal.status("capturing (\(path.rawValue))…") }
        waiting: while let event = await events.next() {
            switch event {
            case .chunk(let chunk):
                if chunk.sequence > nextSequence { missing += chunk.sequence - nextSequence }
                nextSequence = chunk.sequence + 1
                try writer.append(chunk.data)
                if let meter {
                    Terminal.status(meter.line(seconds: Double(writer.dataBytes) / bytesPerFrame / Double(rate), samples: chunk.data))
                }
            case .passThruFinished(.success(let result)):
                outcome = result
                break waiting
            case .passThruFinished(.failure(let error)):
                if meter != nil { Terminal.status(LevelMeter.clear + "\n") }
                _ = try? finish(writer, channels: channels, frames: nil)
                throw ClientFailure.from(error, service: BusService.capture.name)
            case .interrupted:
                if meter != nil { Terminal.status(LevelMeter.clear) }
                if cancelled {
                    _ = try? finish(writer, channels: channels, frames: nil)
                    Terminal.error("earshot: interrupted; \(out) holds what arrived")
                    return ClientExit.interrupted
                }
                cancelled = true
                Terminal.error("earshot: cancelling \(path.rawValue) (Ctrl-C again to quit at once)")
                try? await passThru.cancel()
            case .signal, .key, .inputClosed, .tick, .alertCompleted, .jobState, .jobFinished, .session:
                continue
            case .serviceGone(let name):
                if meter != nil { Terminal.status(LevelMeter.clear + "\n") }
                _ = try? finish(writer, channels: channels, frames: nil)
                throw .notRunning(name)
            }
        }
        if meter != nil { Terminal.status(LevelMeter.clear) }
        guard let outcome else { throw .failed("the wait for \(path.rawValue) ended without its Finished") }
        let written = try finish(writer, channels: channels, frames: outcome.framesCaptured)
        if missing > 0 { Terminal.error("earshot: \(missing) chunk(s) never arrived; the file has a gap") }
        report(path: path, outcome: outcome, channels: written, missing: missing)
        return ClientExit.isSuccessful(outcome.resultCode.rawValue) ? ClientExit.success : ClientExit.unsuccessful
    }

    /// Completes the WAV file; returns the channel count written into its header (the
    /// pass-thru's, else worked out from the bytes and frames received, else 1).
    @discardableResult
    func finish(_ writer: WaveWriter, channels: UInt32?, frames: UInt64?) throws(ClientFailure) -> UInt32 {
        var count = channels ?? 1
        if channels == nil, let frames, frames > 0 {
            count = UInt32(max(1, writer.dataBytes / (frames * UInt64(bits / 8))))
        }
        try writer.finish(sampleRate: rate, bitsPerSample: bits, channels: count)
        return count
    }

    func report(path: ObjectPath, outcome: PassThruResult, channels: UInt32, missing: UInt64) {
        let frames = outcome.framesCaptured
        let seconds = Double(frames) / Double(rate)
        if options.json {
            printJSON(.object([
                ("passThru", .string(path.rawValue)), ("resultCode", .string(outcome.resultCode.rawValue)),
                ("success", .bool(outcome.success)), ("reason", .string(outcome.reason.rawValue)), ("frames", .uint(frames)),
                ("durationMs", .uint(UInt64(outcome.durationMs))),
                ("sampleRate", .uint(UInt64(rate))), ("bitsPerSample", .uint(UInt64(bits))), ("channels", .uint(UInt64(channels))),
                ("file", .string(out)), ("missingChunks", .uint(missing)),
            ]))
        } else {
            Terminal.line("\(outcome.resultCode.rawValue)\(outcome.reason.rawValue.isEmpty ? "" : " (\(outcome.reason))")")
            let layout = channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels"
            Terminal.line("\(frames) frames, \(String(format: "%.3f", seconds)) s of \(rate) Hz \(bits)-bit \(layout), written to \(out)")
        }
    }
}
