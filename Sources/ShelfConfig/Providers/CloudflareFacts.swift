import Logging
package import ShelfCore
import ShelfProviders

// Cloudflare Workers AI (`[cloudflare]`, wire format in ShelfProviders/CloudflareProvider.swift).

extension Configuration {
    package struct Cloudflare: ProviderSection {
        package var model = "@cf/meta/llama-3.2-11b-vision-instruct"
        package var baseURL = "https://api.cloudflare.com"
        package var requestsPerMinute = 300
        /// Requests per Cloudflare day (it resets at midnight UTC); 0: no limit of shelfd's own.
        package var requestsPerDay = 0
        package var timeoutS = 60
        package init() {}
    }

    package var cloudflare: Cloudflare {
        get { providers[Cloudflare.self] }
        set { providers[Cloudflare.self] = newValue }
    }
}

extension Secrets.Name {
    package static let cloudflareAPIToken = Secrets.Name("cloudflare_api_token")
    package static let cloudflareAccountID = Secrets.Name("cloudflare_account_id")
}

extension Secrets {
    package var cloudflareAPIToken: Secret? { self[.cloudflareAPIToken] }
    package var cloudflareAccountID: Secret? { self[.cloudflareAccountID] }
}

extension ProviderFacts {
    static let cloudflare = ProviderFacts(
        kind: .cloudflare, keys: ["model", "base_url", "requests_per_minute", "requests_per_day", "timeout_s"],
        label: "Cloudflare Workers AI", required: [.cloudflareAPIToken, .cloudflareAccountID],
        secretsLabel: "Cloudflare API token", autoRank: 2, autoReason: "Cloudflare credentials are present",
        missingAdvice: "No Cloudflare credentials: put the API token and the account ID in $CREDENTIALS_DIRECTORY/cloudflare_api_token and cloudflare_account_id (systemd LoadCredential=) or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, then restart shelfd.",
        limits: { RequestLimits(perMinute: $0.cloudflare.requestsPerMinute, perDay: $0.cloudflare.requestsPerDay, day: .utc) },
        parse: { reader, t, config throws(ConfigError) in
            var c = config.cloudflare
            c.model = try reader.model(t, "cloudflare", c.model)
            c.baseURL = try reader.url(t, "cloudflare", "base_url", c.baseURL)
            c.requestsPerMinute = try reader.int(t, "cloudflare", "requests_per_minute", c.requestsPerMinute, 1...Int.max)
            c.requestsPerDay = try reader.int(t, "cloudflare", "requests_per_day", c.requestsPerDay, 0...Int.max)
            c.timeoutS = try reader.int(t, "cloudflare", "timeout_s", c.timeoutS, 1...Int.max)
            config.cloudflare = c
        },
        model: { $0.cloudflare.model },
        make: { config, secrets, context in
            let settings = CloudflareSettings(model: config.cloudflare.model, baseURL: config.cloudflare.baseURL,
                                              accountID: secrets.cloudflareAccountID ?? Secret(""),
                                              apiToken: secrets.cloudflareAPIToken ?? Secret(""),
                                              timeout: .seconds(config.cloudflare.timeoutS))
            return CloudflareProvider(settings: settings, http: context.http, logger: Logger(label: "shelfd.cloudflare"),
                                      licenseStore: RememberedLicenses(memory: context.memory))
        })
}

/// Llama 3.2 Vision's one-time license agreement, remembered across restarts (the daemon's database).
private struct RememberedLicenses: CloudflareLicenseMemory {
    let memory: any ProviderMemory

    func hasAgreed(model: String) -> Bool { memory.value(for: "cloudflare.agreed:\(model)") != nil }
    func recordAgreement(model: String) { memory.remember("yes", for: "cloudflare.agreed:\(model)") }
}
