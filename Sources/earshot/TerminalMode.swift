import Glibc

/// The terminal set up for the HMI: keys arrive one at a time without echo (Ctrl-C still
/// raises SIGINT), drawn on the alternate screen with the cursor hidden; `restore` puts
/// everything back.
final class TerminalMode {
    private var saved = termios()
    private var changed = false
    private var screen: Bool

    /// Switches stdin to single keys when it is a terminal; `screen` also takes the
    /// alternate screen of stdout.
    init(screen: Bool) {
        self.screen = screen
        if isatty(0) == 1, tcgetattr(0, &saved) == 0 {
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            changed = tcsetattr(0, TCSANOW, &raw) == 0
        }
        if screen { Terminal.raw("\u{1B}[?1049h\u{1B}[?25l") }
    }

    func restore() {
        if changed {
            tcsetattr(0, TCSANOW, &saved)
            changed = false
        }
        if screen { Terminal.raw("\u{1B}[?25h\u{1B}[?1049l") }
        screen = false
    }

    deinit { restore() }
}
