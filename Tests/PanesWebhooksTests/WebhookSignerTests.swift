import PanesCore
import PanesWebhooks
import Testing

/// Standard Webhooks signatures, checked against the vectors the reference libraries publish
/// (standard-webhooks/standard-webhooks, libraries/*/tests: the same one in Python, Go,
/// JavaScript and Rust).
@Suite struct WebhookSignerTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let payload = Array("{\"test\": 2432232314}".utf8)

    @Test func theReferenceSignatureComesOut() throws {
        let signer = try WebhookSigner(secret: Self.secret)
        #expect(signer.signature(id: Self.id, timestamp: 1_614_265_330, body: Self.payload)
            == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func theSecretReadsWithOrWithoutPrefixAndPadding() throws {
        let prefixed = try WebhookSigner(secret: Self.secret)
        let bare = try WebhookSigner(secret: String(Self.secret.dropFirst(6)))
        #expect(prefixed.key == bare.key)
        #expect(prefixed.key.count == 24)
        // The reference tests' unpadded secrets (needing one and two `=`).
        #expect(try WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr").key.count == 25)
        #expect(try WebhookSigner(secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr12").key.count == 27)
    }

    @Test(arguments: ["", "whsec_", "whsec_!!!!", "whsec_c2hvcnQ=", "whsec_" + String(repeating: "QUFB", count: 30)])
    func aSecretThatIsNotOneIsRefusedNamingTheField(_ secret: String) {
        #expect(throws: PanesError.self) { try WebhookSigner(secret: secret, field: "webhooks[0].secret") }
        do {
            _ = try WebhookSigner(secret: secret, field: "webhooks[0].secret")
        } catch {
            #expect(error.field == "webhooks[0].secret")
        }
    }

    @Test func verificationAcceptsTheRightSignatureAmongOthersAndNothingElse() throws {
        let signer = try WebhookSigner(secret: Self.secret)
        let valid = signer.signature(id: Self.id, timestamp: 1_614_265_330, body: Self.payload)
        // The reference tests' multi-signature header: a v2 and wrong v1s around the valid one.
        let header = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= \(valid) v1,x"
        #expect(signer.verify(id: Self.id, timestamp: 1_614_265_330, body: Self.payload, header: header))
        // The reference's "invalid signature": one character off.
        #expect(!signer.verify(id: Self.id, timestamp: 1_614_265_330, body: Self.payload,
                               header: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="))
        #expect(!signer.verify(id: Self.id, timestamp: 1_614_265_331, body: Self.payload, header: valid), "another time")
        #expect(!signer.verify(id: "msg_other", timestamp: 1_614_265_330, body: Self.payload, header: valid), "another id")
        #expect(!signer.verify(id: Self.id, timestamp: 1_614_265_330, body: Self.payload + [32], header: valid), "another body")
        #expect(!signer.verify(id: Self.id, timestamp: 1_614_265_330, body: Self.payload, header: "v1,"))
    }

    @Test func theHeadersAreTheStandardThree() throws {
        let headers = try WebhookSigner(secret: Self.secret).headers(id: Self.id, timestamp: 1_614_265_330, body: Self.payload)
        #expect(headers.map(\.name) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers.map(\.value) == [Self.id, "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="])
    }
}
