import AlertsCore
import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService

/// `PresentAlert`'s alert and `Speak`'s options read against the contract's keys (types,
/// allowed values and defaults come from there), then the rules the alert core checks.
enum AlertReader {
    typealias Keys = AlertsContract.Manager.Keys
    typealias ButtonKeys = AlertsContract.Manager.SoftButtonKeys

    static func alert(_ call: MethodCall) throws(DBusError) -> AlertRequest {
        let options = try call.request(AlertsContract.Manager.presentAlert)
        var request = AlertRequest()
        try DBusError.readingRequest {
            request.text = try options.require(Keys.text)
            request.secondaryText = try options.require(Keys.secondaryText)
            request.tertiaryText = try options.require(Keys.tertiaryText)
            request.timeoutSeconds = try options.get(Keys.timeout)
            if let audio = try options.get(Keys.audio, as: DBusValue.self) {
                request.audio = try chunks(audio, field: Keys.audio.name)
            }
            request.playTone = try options.require(Keys.playTone)
            request.showWaitIndicator = try options.require(Keys.showWaitIndicator)
            request.softButtons = try options.dictionaries(Keys.softButtons).map(softButton)
            request.icon = try options.require(Keys.icon)
            request.priority = try options.word(Keys.priority) ?? .normal
            request.outliveOwner = try options.require(Keys.outliveOwner)
            try request.validate()
        }
        return request
    }

    /// `Speak`'s request, and its `PlayedAudio`: the pipe the caller wants what is played
    /// written to, when it gave one.
    static func speech(_ call: MethodCall) throws(DBusError) -> (request: AlertRequest, playedAudio: UnixFD?) {
        let options = try call.request(AlertsContract.Manager.speak)
        var request = AlertRequest()
        request.speechOnly = true
        let played = try DBusError.readingRequest { () throws -> DBusValue? in
            request.audio = try chunks(try call.argument(0), field: AlertsContract.Manager.speak.inputs[0].name)
            request.playTone = try options.require(Keys.playTone)
            request.priority = try options.word(Keys.priority) ?? .normal
            request.outliveOwner = try options.require(Keys.outliveOwner)
            try request.validate()
            return try options.get(Keys.playedAudio, as: DBusValue.self)
        }
        guard let played else { return (request, nil) }
        guard let fd = played.unixFDValue, fd.rawValue != nil else {
            throw DBusError.invalidArgs("\(Keys.playedAudio.name): the file descriptor is closed")
        }
        return (request, fd)
    }

    private static func chunks(_ value: DBusValue, field: String) throws -> [SpeechChunk] {
        try SpeechChunk.parseAll(try value.speechPairs(field: field), field: field)
    }

    private static func softButton(_ options: DeclaredRequest) throws -> SoftButton {
        try SoftButton(id: try options.require(ButtonKeys.id), text: try options.require(ButtonKeys.text),
                       image: try options.require(ButtonKeys.image), kind: try options.word(ButtonKeys.type),
                       highlighted: try options.require(ButtonKeys.highlighted),
                       systemAction: try options.word(ButtonKeys.systemAction) ?? .defaultAction,
                       field: String(options.context.dropLast()))
    }
}
