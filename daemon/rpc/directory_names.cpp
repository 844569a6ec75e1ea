// The directory's answers, kept and asked for off the caller's thread
// (see directory_names.hpp).
#include "rpc/directory_names.hpp"

#include <cctype>
#include <chrono>

#include "common/log.hpp"

namespace ringsmb::rpc {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// An account of an AD domain: S-1-5-21-a-b-c-rid (MS-DTYP 2.4.2.4).
bool is_domain_account_sid(const Sid& sid) {
  return sid.authority == 5 && sid.sub.size() == 5 && sid.sub[0] == 21;
}

std::string sid_key(const Sid& sid) { return "sid:" + sid.to_string(); }
std::string name_key(std::string_view name) { return "name:" + lower(name); }

}  // namespace

DirectoryNames::DirectoryNames(Backend backend, Options options)
    : backend_(std::move(backend)), options_(std::move(options)), thread_([this] { run(); }) {}

DirectoryNames::~DirectoryNames() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_.notify_all();
  thread_.join();
}

int64_t DirectoryNames::now() const {
  if (options_.now_ms) return options_.now_ms();
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

std::optional<DomainAccountName> DirectoryNames::fresh(const std::string& key) const {
  auto it = cache_.find(key);
  if (it == cache_.end() || it->second.expires_ms <= now()) return std::nullopt;
  return it->second.entry;
}

void DirectoryNames::store(const std::string& key, std::optional<DomainAccountName> entry, int64_t ttl_ms) {
  auto [it, added] = cache_.insert_or_assign(key, Cached{std::move(entry), now() + ttl_ms});
  if (!added) return;
  cache_order_.push_back(key);
  while (cache_.size() > options_.max_entries && !cache_order_.empty()) {
    cache_.erase(cache_order_.front());
    cache_order_.pop_front();
  }
}

void DirectoryNames::ask_and_wait(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys) {
  if (now() < failed_until_ms_) return;  // the DC failed lately: answer at once with what is kept
  auto answered = [&](const std::string& k) {
    auto it = cache_.find(k);
    return it != cache_.end() && it->second.expires_ms > now();
  };
  bool queued = false;
  for (const auto& k : keys) {
    if (answered(k) || asking_.contains(k) || queued_.contains(k)) continue;
    queued_.insert(k);
    queued = true;
  }
  if (queued) work_.notify_one();
  auto settled = [&] {
    if (stop_ || now() < failed_until_ms_) return true;
    for (const auto& k : keys)
      if (queued_.contains(k) || asking_.contains(k)) return false;
    return true;
  };
  done_.wait_for(lock, std::chrono::milliseconds(options_.wait_ms), settled);
}

std::vector<std::optional<DomainAccountName>> DirectoryNames::by_sids(const std::vector<Sid>& sids) {
  std::vector<std::string> keys;
  for (const auto& sid : sids)
    if (is_domain_account_sid(sid)) keys.push_back(sid_key(sid));
  std::unique_lock lock(mu_);
  if (!keys.empty()) ask_and_wait(lock, keys);
  std::vector<std::optional<DomainAccountName>> out;
  for (const auto& sid : sids) out.push_back(is_domain_account_sid(sid) ? fresh(sid_key(sid)) : std::nullopt);
  return out;
}

std::vector<std::optional<DomainAccountName>> DirectoryNames::by_names(const std::vector<QualifiedName>& names) {
  auto ours = [this](const QualifiedName& n) {
    const auto& [domain, name] = n;
    // An isolated name is looked for in the primary domain too (MS-LSAT
    // 3.1.4.9.4), after the local and well-known names that lsarpc tried.
    bool in_domain =
        domain.empty() || lower(domain) == lower(options_.domain) || lower(domain) == lower(options_.dns_domain);
    return in_domain && !name.empty() && name.size() <= 256;
  };
  std::vector<std::string> keys;
  for (const auto& n : names)
    if (ours(n)) keys.push_back(name_key(n.second));
  std::unique_lock lock(mu_);
  if (!keys.empty()) ask_and_wait(lock, keys);
  std::vector<std::optional<DomainAccountName>> out;
  for (const auto& n : names) out.push_back(ours(n) ? fresh(name_key(n.second)) : std::nullopt);
  return out;
}

bool DirectoryNames::failing() const {
  std::lock_guard lock(mu_);
  return now() < failed_until_ms_;
}

void DirectoryNames::run() {
  // Connected before the first lookup comes: it then waits for a search,
  // not for a bind too.
  answer({});
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !queued_.empty(); });
    if (stop_) return;
    std::vector<std::string> batch;
    while (!queued_.empty() && batch.size() < options_.batch) {
      batch.push_back(*queued_.begin());
      asking_.insert(queued_.extract(queued_.begin()));
    }
    lock.unlock();
    answer(batch);
    lock.lock();
  }
}

void DirectoryNames::answer(const std::vector<std::string>& keys) {
  std::vector<Sid> sids;
  std::vector<std::string> names;
  for (const auto& k : keys) {
    if (k.starts_with("sid:")) {
      if (auto sid = Sid::parse(k.substr(4))) sids.push_back(*sid);
    } else {
      names.push_back(k.substr(5));
    }
  }
  auto found = backend_(sids, names);
  std::lock_guard lock(mu_);
  for (const auto& k : keys) asking_.erase(k);
  if (!found) {
    if (now() >= failed_until_ms_)
      LOG_WARN("domain directory: %s; SIDs of the domain stay unnamed, asked again in %lld s", found.error().c_str(),
               static_cast<long long>(options_.retry_after_ms / 1000));
    failed_until_ms_ = now() + options_.retry_after_ms;
    done_.notify_all();
    return;
  }
  if (!keys.empty())
    LOG_DEBUG("domain directory: asked for %zu SIDs and %zu names, found %zu", sids.size(), names.size(),
              found->size());
  for (const auto& entry : *found) {
    store(sid_key(entry.sid), entry, options_.found_ttl_ms);
    store(name_key(entry.name), entry, options_.found_ttl_ms);
  }
  // Asked but not found: unknown to the domain (for a while).
  for (const auto& k : keys)
    if (!fresh(k)) store(k, std::nullopt, options_.missing_ttl_ms);
  done_.notify_all();
}

namespace {

std::mutex directory_mu;
std::shared_ptr<DirectoryNames> the_directory;

}  // namespace

void set_domain_directory(std::shared_ptr<DirectoryNames> directory) {
  std::shared_ptr<DirectoryNames> old;
  {
    std::lock_guard lock(directory_mu);
    old = std::exchange(the_directory, std::move(directory));
  }
  // old (and its thread) ends here, outside the lock, once no pipe holds it.
}

std::shared_ptr<DirectoryNames> domain_directory() {
  std::lock_guard lock(directory_mu);
  return the_directory;
}

}  // namespace ringsmb::rpc
