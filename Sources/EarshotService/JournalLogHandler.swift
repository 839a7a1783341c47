import EarshotDBus
import FoundationEssentials
import Logging

/// Logs one entry per event.
///
/// Under systemd (`JOURNAL_STREAM` set) each event goes to the journal as an entry of its
/// own fields: `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE`,
/// `CODE_FUNC`, and each metadata key as `EARSHOT_KEY` (so `journalctl -u … EARSHOT_PASSTHRU=3`
/// finds a pass-thru's lines); should the journal's socket not take it, the line goes to
/// stderr starting with the `<N>` syslog priority. On a terminal a line carries an ISO 8601
/// time (UTC, see `UTCTime`) and the level instead. Metadata follows the message as
/// `key=value` either way.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let journal: Bool

    private static let output = Locked(())

    public init(label: String, level: Logger.Level, journal: Bool = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil) {
        self.label = label
        self.logLevel = level
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        let suffix = fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = "\(event.message)\(suffix)".replacing("\n", with: " ")
        let line: String
        if journal {
            var entry: [(String, String)] = [
                ("MESSAGE", text), ("PRIORITY", String(Self.priority(event.level))), ("SYSLOG_IDENTIFIER", label),
                ("CODE_FILE", event.file), ("CODE_LINE", String(event.line)), ("CODE_FUNC", event.function),
            ]
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                entry.append(("EARSHOT_" + JournalSocket.fieldName(key), "\(value)"))
            }
            if Self.output.withLock({ _ in JournalSocket.send(entry) }) { return }
            line = "<\(Self.priority(event.level))>\(text)\n"
        } else {
            line = "\(UTCTime.now()) \(event.level.rawValue) \(label): \(text)\n"
        }
        Self.output.withLock { _ in FileOutput.write(line) }
    }

    /// syslog(3) priorities.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
