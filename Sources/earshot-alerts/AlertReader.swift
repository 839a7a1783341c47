import AlertsCore
import ContractCore
import EarshotDBus
import EarshotService

/// Reads `PresentAlert`'s `a{sv}` and `Speak`'s arguments into a validated request:
/// wrong types and unknown keys are InvalidArgs, broken rules InvalidData.
enum AlertReader {
    static let invalidData = DBusError.earshotPrefix + "InvalidData"

    static func alert(_ value: DBusValue) throws(DBusError) -> AlertRequest {
        var options = try OptionReader(value, errorName: invalidData)
        var request = AlertRequest()
        try DBusError.readingRequest {
            request.text = try options.get("Text", .string) ?? ""
            request.secondaryText = try options.get("SecondaryText", .string) ?? ""
            request.tertiaryText = try options.get("TertiaryText", .string) ?? ""
            request.timeoutSeconds = try options.get("Timeout", .double())
            if let audio = try options.get("Audio", .exactly(.array(.structure([.string, .string])))) {
                request.audio = try chunks(audio, field: "Audio")
            }
            request.playTone = try options.get("PlayTone", .bool) ?? false
            request.showWaitIndicator = try options.get("ShowWaitIndicator", .bool) ?? false
            if let buttons = try options.get("SoftButtons", .vardicts) {
                request.softButtons = try buttons.enumerated().map { index, reader throws in
                    try softButton(reader, field: "SoftButtons[\(index)]")
                }
            }
            request.icon = try options.get("Icon", .string) ?? ""
            request.priority = try priority(&options)
            request.outliveOwner = try options.get("OutliveOwner", .bool) ?? false
            try options.finish()
            try request.validate()
        }
        return request
    }

    static func speech(chunks value: DBusValue, options optionsValue: DBusValue) throws(DBusError) -> AlertRequest {
        var options = try OptionReader(optionsValue, errorName: invalidData)
        var request = AlertRequest()
        request.speechOnly = true
        try DBusError.readingRequest {
            request.audio = try chunks(value, field: "chunks")
            request.playTone = try options.get("PlayTone", .bool) ?? false
            request.priority = try priority(&options)
            request.outliveOwner = try options.get("OutliveOwner", .bool) ?? false
            try options.finish()
            try request.validate()
        }
        return request
    }

    private static func priority(_ options: inout OptionReader) throws(DBusError) -> AlertPriority {
        guard let name = try options.get("Priority", .oneOf(AlertPriority.allCases.map(\.rawValue))) else { return .normal }
        return AlertPriority(rawValue: name) ?? .normal
    }

    private static func chunks(_ value: DBusValue, field: String) throws -> [SpeechChunk] {
        try SpeechChunk.parseAll(try value.speechPairs(field: field), field: field)
    }

    private static func softButton(_ reader: OptionReader, field: String) throws -> SoftButton {
        var options = reader
        let id = try options.require("Id", .uint16())
        let text = try options.get("Text", .string) ?? ""
        let image = try options.get("Image", .string) ?? ""
        let kind = try options.get("Type", .oneOf(SoftButton.Kind.allCases.map(\.rawValue))).flatMap(SoftButton.Kind.init(rawValue:))
        let highlighted = try options.get("Highlighted", .bool) ?? false
        let action = try options.get("SystemAction", .oneOf(SoftButton.SystemAction.allCases.map(\.rawValue)))
            .flatMap(SoftButton.SystemAction.init(rawValue:)) ?? .defaultAction
        try options.finish()
        return try SoftButton(id: id, text: text, image: image, kind: kind, highlighted: highlighted, systemAction: action, field: field)
    }
}
