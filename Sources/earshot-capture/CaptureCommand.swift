import ArgumentParser
import EarshotALSA
import EarshotContract
import EarshotDBus
import EarshotService

@main
struct CaptureCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-capture",
        abstract: "Microphone pass-thru on ALSA (org.earshot.Capture1).",
        discussion: """
            Serves SmartDeviceLink's \(CaptureContract.Manager.performAudioPassThru.name): PCM chunks as unicast \(CaptureContract.PassThru.audioPassThru.name) \
            signals to the requester, ended by timeout, Done, Cancel, Retry, End or silence.
            """)

    @OptionGroup var bus: BusOptions
    @OptionGroup var introspection: IntrospectOption<CaptureContract>

    @Option(help: ArgumentHelp("ALSA PCM to capture from when the audio session names no input.", valueName: "pcm"))
    var device = "default"

    @Option(help: ArgumentHelp("device: take audio as fast as the PCM gives it; realtime: never faster than real time (for file-backed test microphones).", valueName: "pacing"),
            transform: CaptureCommand.parsePacing)
    var pace: CapturePacing = .device

    @Option(help: ArgumentHelp("Channels to capture (1 mono, 2 stereo) when the audio session names no input.", valueName: "count"))
    var channels: UInt32 = 1

    @Flag(inversion: .prefixedNo,
          help: "Record from the audio session's input (org.earshot.Session1: its device, channels and buffer duration) when it names one; otherwise --device and --channels.")
    var followSession = true

    @Option(help: ArgumentHelp("ALSA PCM that hears what the speakers play (a sink's monitor, a codec's loopback channel): the far end a pass-thru with \(CaptureContract.Manager.Keys.echoCancel.name) cancels. None by default.", valueName: "pcm"))
    var echoReference: String?

    @Option(help: ArgumentHelp("Seconds a finished pass-thru object stays on the bus.", valueName: "seconds"))
    var lingerSeconds: Double = 60

    func validate() throws {
        guard lingerSeconds >= 0, lingerSeconds.isFinite else { throw ValidationError("--linger-seconds must be 0 or more") }
        guard (1...2).contains(channels) else { throw ValidationError("--channels must be 1 or 2") }
    }

    static func parsePacing(_ text: String) throws -> CapturePacing {
        guard let pacing = CapturePacing(rawValue: text) else {
            throw ValidationError("--pace must be one of \(CapturePacing.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return pacing
    }

    func run() async throws {
        let settings = CaptureService.Settings(device: device, pacing: pace, linger: .milliseconds(Int(lingerSeconds * 1000)),
                                               channels: channels, systemBus: bus.isSystemBus,
                                               followSession: followSession, echoReference: echoReference)
        await ServiceMain.run(CaptureContract.service, options: bus) { connection, logger in
            let service = CaptureService(connection: connection, settings: settings, logger: logger)
            try service.start()
            await service.watchInterruptions()
            await service.followInput()
            return { service.shutdown() }
        }
    }
}
