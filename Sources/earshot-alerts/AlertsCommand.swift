import ArgumentParser
import EarshotALSA
import EarshotContract
import EarshotDBus
import EarshotService

@main
struct AlertsCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-alerts",
        abstract: "The alert presenter and voice (org.earshot.Alerts1).",
        discussion: """
            Presents alerts one at a time from a priority queue (at most 16 waiting), with soft \
            buttons, timeouts, preemption, per-owner rate limits and try-again times, and speaks \
            their audio (espeak-ng speech, phonemes, jingles, silence, WAV/Ogg/FLAC files, a tone) \
            through ALSA. Speak() gives other services a voice (pass-thru prompts).
            """)

    @OptionGroup var bus: BusOptions
    @OptionGroup var introspection: IntrospectOption<AlertsContract>

    @Option(help: ArgumentHelp("ALSA PCM to play alert audio on.", valueName: "pcm"))
    var outputDevice = "default"

    @Option(help: ArgumentHelp("Sample rate of the alert audio, in Hz (mono, 16-bit).", valueName: "hz"))
    var outputRate: UInt32 = 22050

    @Option(help: ArgumentHelp("The output buffer to ask the PCM for, in milliseconds (larger for outputs that need it, such as Bluetooth).", valueName: "ms"))
    var outputBufferMs: UInt32 = 100

    @Option(help: ArgumentHelp("device: write as fast as the PCM accepts; realtime: never more than a buffer ahead of real time (for file-backed test speakers).", valueName: "pacing"),
            transform: AlertsCommand.parsePacing)
    var outputPace: PlaybackPacing = .device

    @Option(help: ArgumentHelp("Present alerts on the desktop too: none, or notifications (org.freedesktop.Notifications).", valueName: "display"))
    var display = "none"

    @Option(help: ArgumentHelp("Seconds a finished alert object stays on the bus.", valueName: "seconds"))
    var lingerSeconds: Double = 60

    func validate() throws {
        guard lingerSeconds >= 0, lingerSeconds.isFinite else { throw ValidationError("--linger-seconds must be 0 or more") }
        guard (8000...192_000).contains(outputRate) else { throw ValidationError("--output-rate must be within 8000...192000") }
        guard (10...5000).contains(outputBufferMs) else { throw ValidationError("--output-buffer-ms must be within 10...5000") }
        guard ["none", "notifications"].contains(display) else { throw ValidationError("--display must be none or notifications") }
    }

    static func parsePacing(_ text: String) throws -> PlaybackPacing {
        guard let pacing = PlaybackPacing(rawValue: text) else {
            throw ValidationError("--output-pace must be one of \(PlaybackPacing.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return pacing
    }

    func run() async throws {
        let settings = AlertsService.Settings(outputDevice: outputDevice, outputRate: outputRate,
                                              linger: .milliseconds(Int(lingerSeconds * 1000)),
                                              systemBus: bus.isSystemBus)
        let voice = try AlertVoice(device: outputDevice, sampleRate: outputRate, bufferMilliseconds: outputBufferMs, pacing: outputPace)
        let showOnDesktop = display == "notifications"
        await ServiceMain.run(AlertsContract.service, options: bus) { connection, logger in
            let service = AlertsService(connection: connection, settings: settings, output: voice, logger: logger)
            try await service.start()
            if showOnDesktop {
                let bridge = NotificationsBridge(service: service)
                try await bridge.start()
                service.observers.withLock { $0.append(bridge) }
            }
            return { service.shutdown() }
        }
    }
}
