/// A finished request's object stays on the bus for a while, so that its owner can still
/// read how it ended, then leaves.
public enum Lingering {
    /// Waits `linger` (less when the task is cancelled, at shutdown), runs `leave` (which
    /// unexports the object) and asks for the heap's free pages back soon
    /// (`MemoryReturn.trimSoon`): after a burst, thousands of objects leave within seconds.
    public static func leave(after linger: Duration, _ leave: () -> Void) async {
        try? await Task.sleep(for: linger)
        leave()
        MemoryReturn.trimSoon()
    }
}
