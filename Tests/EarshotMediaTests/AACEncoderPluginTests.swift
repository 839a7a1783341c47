@testable import EarshotMedia
import Foundation
import Testing

/// The AAC plugin is found where the build and the installation put it, and its absence
/// is an error that says where it was looked for.
@Suite struct AACEncoderPluginTests {
    @Test func theBuildsPluginLoadsFromTheExecutablesDirectory() throws {
        #expect(AACEncoderPlugin.searchDirectories.count == 2 || getenv("EARSHOT_PLUGIN_DIR") != nil)
        let address = try AACEncoderPlugin.load(from: AACEncoderPlugin.searchDirectories).get()
        #expect(address != 0)
    }

    @Test func aMissingPluginSaysWhereItWasLookedFor() throws {
        let empty = TestDirectory()
        let result = AACEncoderPlugin.load(from: [empty.path])
        guard case .failure(let error) = result else {
            Issue.record("loaded a plugin from an empty directory")
            return
        }
        #expect(error.kind == .io)
        #expect(error.message.contains("AAC encoding is unavailable"))
        #expect(error.message.contains(empty.path + "/libEarshotAACEncoder.so"))
    }

    @Test func aFileThatIsNotALibraryIsRefusedWithTheLoadersReason() throws {
        let directory = TestDirectory()
        _ = directory.write("libEarshotAACEncoder.so", Array("not a library".utf8))
        let result = withExtendedLifetime(directory) { AACEncoderPlugin.load(from: [directory.path]) }
        guard case .failure(let error) = result else {
            Issue.record("loaded a text file as the plugin")
            return
        }
        #expect(error.message.contains("cannot load \(directory.path)/libEarshotAACEncoder.so"))
    }
}
