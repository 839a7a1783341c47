import ContractCore
import EarshotClient
import Foundation
import Synchronization

// A voice memo: speak a prompt, capture until the speaker falls silent, keep it as a piece.
let earshot = try Earshot.connect()
var request = AudioPassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 30_000)
request.initialPrompt = [.text("Say your memo")]
request.endOnSilenceMs = 1500
let pcm = Mutex<[UInt8]>([])
let result = try await earshot.capture.perform(request) { chunk in pcm.withLock { $0 += chunk.data } }
let audio = pcm.withLock { $0 }
let file = FileManager.default.temporaryDirectory.appendingPathComponent("memo-\(getpid()).wav")
try Data(PCMWave.header(sampleRate: 16000, channels: 1, bitsPerSample: 16, dataBytes: UInt64(audio.count)) + audio).write(to: file)
defer { try? FileManager.default.removeItem(at: file) }
let id = try await earshot.pieces.drop(PieceDrop(title: "Memo \(Date().formatted(date: .omitted, time: .shortened))", mixStemPath: file.path))
print("\(result.resultCode.rawValue) (\(result.reason)): \(audio.count / 32) ms kept as piece \(id)")
earshot.close()
