import AlertsCore
import CaptureCore
import EarshotContract
import EarshotDBus
import PiecesCore
import SessionCore
import Testing

/// The contract's key schema against itself and against the domain cores: every default is
/// a value its key accepts, and every list of allowed values and names is the one the core
/// that checks them knows.
@Suite struct KeySchemaTests {
    static let allKeys: [OptionKey] = EarshotContract.services.flatMap(\.interfaces).flatMap(\.methods)
        .flatMap(\.inputs).flatMap { $0.keys + $0.keys.flatMap(\.keys) }

    /// A default as the D-Bus value a client would send for it.
    static func value(_ text: String, _ signature: String) -> DBusValue? {
        switch signature {
        case "b": Bool(text).map(DBusValue.boolean)
        case "y": UInt8(text).map(DBusValue.byte)
        case "q": UInt16(text).map(DBusValue.uint16)
        case "u": UInt32(text).map(DBusValue.uint32)
        case "t": UInt64(text).map(DBusValue.uint64)
        case "d": Double(text).map(DBusValue.double)
        case "s": .string(String(default: text)!)
        default: nil
        }
    }

    @Test func everyDefaultIsAValueItsKeyAccepts() throws {
        let defaulted = Self.allKeys.filter { $0.defaultValue != nil }
        #expect(defaulted.count > 20)
        for key in defaulted {
            let text = key.defaultValue!
            let value = try #require(Self.value(text, key.signature), "\(key.name)'s default '\(text)' is not a \(key.signature)")
            #expect(throws: Never.self, "\(key.name)'s default '\(text)' breaks its rules") {
                try DeclaredRequest(.vardict([key.name: value]), keys: [key])
            }
            #expect(!key.required, "\(key.name) is required and has a default")
        }
    }

    static func allowed(_ key: OptionKey) -> (values: [String], aliases: [String: String]) {
        for case .oneOf(let values, let aliases, _, _) in key.rules { return (values, aliases) }
        return ([], [:])
    }

    /// Every spelling a session word accepts is accepted by its key and means the same word.
    func sessionWords<Word: SessionWord>(_ key: OptionKey, _: Word.Type) {
        let (values, aliases) = Self.allowed(key)
        #expect(Set(values) == Set(Word.allCases.map(\.rawValue)), "\(key.name)'s values")
        #expect(Set(aliases.keys) == Set(Word.allCases.flatMap(\.aliases)), "\(key.name)'s aliases")
        for (alias, value) in aliases {
            #expect((try? Word.parse(alias)) == Word(rawValue: value), "\(key.name): \(alias) stands for \(value)")
        }
    }

    @Test func theSessionVocabularyIsTheCoresVocabulary() {
        typealias Keys = SessionContract.Manager.Keys
        sessionWords(Keys.category, SessionCategory.self)
        sessionWords(Keys.mode, SessionMode.self)
        sessionWords(Keys.options, SessionOption.self)
        sessionWords(Keys.inputOrientation, InputOrientation.self)
        sessionWords(Keys.polarPattern, PolarPattern.self)
    }

    @Test func captureValuesAndNamesAreThePassThruRules() {
        typealias Keys = CaptureContract.Manager.Keys
        let rate = Self.allowed(Keys.samplingRate)
        #expect(rate.values == PassThruRules.samplingRates.map(String.init))
        #expect(rate.aliases == PassThruRules.samplingRateNames.mapValues(String.init))
        let bits = Self.allowed(Keys.bitsPerSample)
        #expect(bits.values == PassThruRules.bitsPerSampleValues.map(String.init))
        #expect(bits.aliases == PassThruRules.bitsPerSampleNames.mapValues(String.init))
        #expect(Self.allowed(Keys.audioType).values == PassThruRules.audioTypes)
        #expect(Self.allowed(Keys.delivery).values == PassThruRequest.Delivery.allCases.map(\.rawValue))
        #expect(Self.allowed(OrchestratorContract.Manager.Keys.samplingRate).values == rate.values)
        #expect(Self.allowed(OrchestratorContract.Manager.Keys.bitsPerSample).values == bits.values)
    }

    @Test func alertAndPieceWordsAreTheCoresWords() {
        #expect(Self.allowed(AlertsContract.Manager.Keys.priority).values == AlertPriority.allCases.map(\.rawValue))
        #expect(Self.allowed(AlertsContract.Manager.SoftButtonKeys.type).values == SoftButton.Kind.allCases.map(\.rawValue))
        #expect(Self.allowed(AlertsContract.Manager.SoftButtonKeys.systemAction).values == SoftButton.SystemAction.allCases.map(\.rawValue))
        #expect(Self.allowed(PiecesContract.Manager.QueryKeys.sortBy).values == PieceQuery.SortKey.allCases.map(\.rawValue))
        #expect(Self.allowed(PiecesContract.Manager.QueryKeys.tonality).values == Tonality.names)
        #expect(Self.allowed(PiecesContract.Manager.PieceKeys.tonality).values == Tonality.names)
    }
}
