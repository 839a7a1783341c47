import Glibc

/// Writing to the terminal: results on stdout, diagnostics and the live meter on stderr.
/// Each call is one unbuffered write, so a pipe sees every line as it is printed.
enum Terminal {
    /// Prints `text` and a newline on stdout.
    static func line(_ text: String = "") { write(text + "\n", to: 1) }

    /// Prints `text` and a newline on stderr.
    static func error(_ text: String) { write(text + "\n", to: 2) }

    /// Writes `text` on stderr as it is (for `\r` meters).
    static func status(_ text: String) { write(text, to: 2) }

    /// Writes `text` on stdout as it is (escape sequences, whole screens).
    static func raw(_ text: String) { write(text, to: 1) }

    /// Whether stderr is a terminal (the level meter is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    private static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }
}
