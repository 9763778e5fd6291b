import Foundation
import SwiftyCacheCodable
import Testing

@Suite struct XXHashKeyHasherTests {
    /// XXH64 with seeds 0 and 0x5357494654594341, from the reference implementation (Python's
    /// `xxhash` package), concatenated.
    @Test(arguments: [
        ("", "ef46db3751d8e999f71e42975e776255"),
        ("abc", "44bc2cf5ad770999dcfdb10098215858"),
        ("s:note-1", "7d192290c93a91b4bb88561f0c9ef894"),
    ])
    func referenceValues(message: String, name: String) {
        #expect(XXHashKeyHasher().engineKey(for: Data(message.utf8)) == name)
    }

    @Test func namesAreValidEngineKeys() {
        for length in [0, 1, 31, 32, 33, 100, 1000] {
            let name = XXHashKeyHasher().engineKey(for: Data(repeating: 7, count: length))
            #expect(name.count == 32)
            #expect(name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        }
    }
}
