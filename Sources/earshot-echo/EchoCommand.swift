import ArgumentParser
import EarshotDBus
import EarshotEcho
import EarshotService

@main
struct EchoCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-echo",
        abstract: "A D-Bus echo service (org.earshot.Echo1) that exercises the Earshot D-Bus binding.",
        discussion: "Used by the binding's tests and as the peer of the D-Bus benchmark.")

    @OptionGroup var bus: BusOptions

    func run() async throws {
        await ServiceMain.run(executable: "earshot-echo", busName: EchoService.busName, options: bus) { connection, _ in
            let service = EchoService()
            try service.export(on: connection)
            return { service.shutdown() }
        }
    }
}
