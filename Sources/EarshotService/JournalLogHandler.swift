import EarshotDBus
import FoundationEssentials
import Logging

/// Logs one line per event to stderr.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with the syslog priority in the
/// `<N>` form journald reads, and the journal adds time and process; on a terminal a line
/// carries an ISO 8601 time (UTC, see `UTCTime`) and the level instead. Metadata follows
/// as `key=value`.
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
