import ArgumentParser
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot session set`: a new desired state, then the state in force.
struct SessionSetCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set the desired session state (Session1.\(SessionContract.Manager.setDesiredState.name)) and show the result.",
        discussion: """
            Any of the contract's spellings work, case-insensitively (e.g. play-and-record, \
            speaker). The steps are applied in order and the first refused step is the error \
            (e.g. \(EarshotErrorName.incompatibleOption.name)); the steps before it stay applied. On \
            success the state in force is printed as by 'earshot session get'.

            \(ClientExit.discussion)
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("ambient, soloAmbient, playback, record, playAndRecord or multiRoute.", valueName: "category"))
    var category: String

    @Option(name: .customLong("option"), help: ArgumentHelp("A category option, e.g. mixWithOthers, duckOthers, defaultToSpeaker (repeatable).",
                                                            valueName: "option"))
    var categoryOptions: [String] = []

    @Option(help: ArgumentHelp("default, voiceChat, videoRecording, measurement, moviePlayback, spokenAudio or gameChat.",
                               valueName: "mode"))
    var mode: String?

    @Flag(inversion: .prefixedNo, help: "Activate (or with --no-active deactivate) the session.")
    var active: Bool?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Preferred sample rate.", valueName: "Hz"))
    var sampleRate: Double?

    @Option(name: .customLong("io-buffer-duration"), help: ArgumentHelp("Preferred IO buffer duration.", valueName: "seconds"))
    var ioBufferDuration: Double?

    @Option(name: .customLong("preferred-input"), help: ArgumentHelp("An input from 'earshot session inputs', or builtInMic.",
                                                                    valueName: "name"))
    var preferredInput: String?

    @Option(name: .customLong("data-source"), help: ArgumentHelp("The input's data source.", valueName: "name"))
    var dataSource: String?

    @Option(name: .customLong("polar-pattern"), help: ArgumentHelp("stereo, cardioid, omnidirectional or subcardioid.",
                                                                  valueName: "pattern"))
    var polarPattern: String?

    @Option(help: ArgumentHelp("Input orientation, e.g. portrait, landscapeLeft, none.", valueName: "orientation"))
    var orientation: String?

    var desired: DesiredSessionState {
        var desired = DesiredSessionState(category: category, options: categoryOptions, active: active)
        desired.mode = mode
        desired.sampleRate = sampleRate
        desired.ioBufferDuration = ioBufferDuration
        desired.preferredInput = preferredInput
        desired.dataSourceName = dataSource
        desired.polarPattern = polarPattern
        desired.inputOrientation = orientation
        return desired
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.with(.session) { [desired] in try await $0.session.setDesiredState(desired) }
        SessionSubcommand.printState(try await SessionSubcommand.state(client), json: options.json)
        return ClientExit.success
    }
}
