internal import ShelfCore

// Cloudflare Workers AI (`[cloudflare]`, wire format in ShelfProviders/CloudflareProvider.swift).

extension Configuration {
    package struct Cloudflare: HostedModelSection {
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

extension ProviderFacts {
    static let cloudflare = ProviderFacts(
        kind: .cloudflare, keys: Configuration.Cloudflare.keys,
        label: "Cloudflare Workers AI", required: [.cloudflareAPIToken, .cloudflareAccountID],
        secretsLabel: "Cloudflare API token", autoRank: 2, autoReason: "Cloudflare credentials are present",
        missingAdvice:
            "No Cloudflare credentials: put the API token and the account ID in $CREDENTIALS_DIRECTORY/cloudflare_api_token and cloudflare_account_id (systemd LoadCredential=) or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, then restart shelfd.",
        limits: { $0.cloudflare.limits(day: .utc) },
        parse: { s, config throws(ConfigError) in config.cloudflare = try config.cloudflare.reading(s) })
}
