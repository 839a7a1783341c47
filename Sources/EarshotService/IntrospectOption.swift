import ArgumentParser
import EarshotContract
import Glibc

/// A service's contract, as the process scaffolding needs it.
public protocol ServiceContract {
    static var service: ServiceDeclaration { get }
}

extension CaptureContract: ServiceContract {}
extension AlertsContract: ServiceContract {}
extension PiecesContract: ServiceContract {}
extension SessionContract: ServiceContract {}
extension OrchestratorContract: ServiceContract {}

/// `--introspect`: prints the service's interfaces as introspection XML and exits, before
/// anything else happens (no bus, device or database is touched).
public struct IntrospectOption<Contract: ServiceContract>: ParsableArguments {
    @Flag(help: "Print this service's D-Bus interfaces as introspection XML and exit (no bus needed).")
    public var introspect = false

    public init() {}

    public func validate() throws {
        guard introspect else { return }
        FileOutput.write(Contract.service.introspection, to: STDOUT_FILENO)
        Glibc.exit(0)
    }
}
