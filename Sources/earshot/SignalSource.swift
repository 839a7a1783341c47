import Dispatch
import EarshotDBus
import Glibc

/// A POSIX signal delivered to a handler on a dispatch queue instead of its default action.
final class SignalSource: Sendable {
    private let number: Int32
    private let source: Locked<SignalSourceBox?>

    init(_ number: Int32, handler: @escaping @Sendable () -> Void) {
        self.number = number
        signal(number, SIG_IGN)
        let made = DispatchSource.makeSignalSource(signal: number, queue: .global())
        made.setEventHandler(handler: handler)
        made.resume()
        source = Locked(SignalSourceBox(made))
    }

    func cancel() {
        guard let box = source.withLock({ value -> SignalSourceBox? in
            defer { value = nil }
            return value
        }) else { return }
        box.source.cancel()
        signal(number, SIG_DFL)
    }
}

/// Carries a dispatch signal source through a lock.
struct SignalSourceBox: @unchecked Sendable {
    // @unchecked Sendable: `any DispatchSourceSignal` is not declared Sendable. The one box
    // of a source is made in `SignalSource.init` (before the object is shared), kept in
    // `SignalSource.source`'s lock, and taken out of it exactly once, by `cancel()`, which
    // leaves nil behind; the event handler never touches the source. So at most one thread
    // ever uses the source outside the lock, and what it does (`cancel()`) libdispatch
    // documents as safe from any thread.
    let source: any DispatchSourceSignal
    init(_ source: any DispatchSourceSignal) { self.source = source }
}
