import ArgumentParser

@main
struct EarshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "earshot", abstract: "The Earshot command-line client.")
}
