package io.mm2gov.oracle;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps secret values out of every answer: the oracle reads files that may hold credentials, and its
 * answers end up in test logs. A key is secret if its name says so; its value is never echoed, only
 * whether it is set and whether it is a config provider reference ({@code ${provider:path:key}}).
 */
final class Secrets {

    static final String REDACTED = "[redacted]";

    /** Key names that hold secrets ({@code ssl.keystore.key} is a PEM private key). */
    private static final Pattern SECRET_KEY = Pattern.compile(
            "password|jaas|secret|token|credential|basic\\.auth\\.user\\.info|ssl\\.keystore\\.key$",
            Pattern.CASE_INSENSITIVE);

    /** One config provider reference. */
    private static final Pattern REFERENCE = Pattern.compile("\\$\\{[^}]*\\}");
    private static final Pattern WORD = Pattern.compile("\\w");

    /** An option inside a JAAS line: {@code name="value"} or {@code name=value}. */
    private static final Pattern JAAS_OPTION = Pattern.compile("([\\w.\\-]+)\\s*=\\s*(?:\"([^\"]*)\"|([^\\s;\"]+))");

    private Secrets() {
    }

    static boolean isSecretKey(String key) {
        return SECRET_KEY.matcher(key).find();
    }

    /**
     * How a secret is given, never what it is: "unset", "reference" (a config provider reference; for a
     * JAAS line: every secret option is one), "inline" (a literal secret in the file) or "set" (a JAAS
     * line with no secret option, e.g. Kerberos with a keytab).
     */
    static String status(Object value) {
        if (value == null) {
            return "unset";
        }
        String text = String.valueOf(value).trim();
        if (!text.contains("LoginModule")) {
            // only references, perhaps joined by punctuation ("${dir:x:user}:${dir:x:password}")
            boolean referencesOnly = text.contains("${") && !WORD.matcher(REFERENCE.matcher(text).replaceAll("")).find();
            return referencesOnly ? "reference" : "inline";
        }
        int secretOptions = 0;
        Matcher option = JAAS_OPTION.matcher(text);
        while (option.find()) {
            if (isSecretKey(option.group(1))) {
                String optionValue = option.group(2) != null ? option.group(2) : option.group(3);
                if (!REFERENCE.matcher(optionValue.trim()).matches()) {
                    return "inline";
                }
                secretOptions++;
            }
        }
        return secretOptions > 0 ? "reference" : "set";
    }

    /** {@code text} with every secret value of {@code props} replaced: exception messages may quote values. */
    static String scrub(String text, Map<String, String> props) {
        if (text == null) {
            return null;
        }
        String scrubbed = text;
        for (Map.Entry<String, String> entry : props.entrySet()) {
            String value = entry.getValue();
            if (isSecretKey(entry.getKey()) && value != null && !value.isEmpty()) {
                scrubbed = scrubbed.replace(value, REDACTED);
                Matcher option = JAAS_OPTION.matcher(value);
                while (option.find()) {
                    String optionValue = option.group(2) != null ? option.group(2) : option.group(3);
                    if (isSecretKey(option.group(1)) && !optionValue.isEmpty()) {
                        scrubbed = scrubbed.replace(optionValue, REDACTED);
                    }
                }
            }
        }
        return scrubbed;
    }
}
