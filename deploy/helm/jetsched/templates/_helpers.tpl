{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "jetsched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart>, or the release alone when it contains the chart name. */}}
{{- define "jetsched.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart label value: name-version. */}}
{{- define "jetsched.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the scheduler pods (Deployment, Services, PDB): never change them on upgrade. */}}
{{- define "jetsched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jetsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "jetsched.labels" -}}
helm.sh/chart: {{ include "jetsched.chart" . }}
{{ include "jetsched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/part-of: jetsched
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* ServiceAccount name. */}}
{{- define "jetsched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "jetsched.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Image reference: repository:tag, the tag defaulting to the appVersion. */}}
{{- define "jetsched.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
Refuses values that would render a scheduler `scheduler run` rejects at
start, or a console open to the network without authentication; each
message names the value.
*/}}
{{- define "jetsched.validate" -}}
{{- $v := .Values }}
{{- if not $v.nats.url }}
{{- fail "nats.url: required: the chart runs schedulers against an existing NATS system (e.g. nats://nats:4222)" }}
{{- end }}
{{- if and $v.nats.creds.secretName $v.nats.nkey.secretName }}
{{- fail "nats.creds.secretName and nats.nkey.secretName: give one (--creds and --nkey are mutually exclusive)" }}
{{- end }}
{{- if and $v.nats.tls.clientCert (not $v.nats.tls.secretName) }}
{{- fail "nats.tls.clientCert: needs nats.tls.secretName, the Secret holding the client certificate and key" }}
{{- end }}
{{- if $v.console.enabled }}
{{- $auth := $v.console.auth }}
{{- if not $auth.type }}
{{- fail "console.enabled: the console listens on the pod network and needs authentication: set console.auth.type (token, basic or proxy); see docs/console.md" }}
{{- end }}
{{- if and (has $auth.type (list "token" "basic")) (not $auth.secretName) }}
{{- fail (printf "console.auth.secretName: console.auth.type %s needs the Secret holding its file" $auth.type) }}
{{- end }}
{{- if and (eq $auth.type "proxy") (or (not $auth.header) (not $auth.trustedProxies)) }}
{{- fail "console.auth.header and console.auth.trustedProxies: console.auth.type proxy needs the user header and the proxy's addresses" }}
{{- end }}
{{- end }}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.service.enabled) }}
{{- fail "metrics.serviceMonitor.enabled: needs metrics.service.enabled, the Service the ServiceMonitor selects" }}
{{- end }}
{{- if and $v.scheduler.schedulesKeys (not $v.scheduler.schedulesConfigMap) }}
{{- fail "scheduler.schedulesKeys: needs scheduler.schedulesConfigMap, the ConfigMap holding the files" }}
{{- end }}
{{- end }}

{{/*
The arguments of `scheduler run`, as a YAML list: every setting the chart
controls is a flag (the pod runs no config file).
*/}}
{{- define "jetsched.args" -}}
{{- $v := .Values }}
{{- $a := list "run" (printf "--nats-url=%s" $v.nats.url) }}
{{- with $v.nats.creds.secretName }}
{{- $a = append $a (printf "--creds=/etc/jetsched/nats/creds/%s" $v.nats.creds.key) }}
{{- end }}
{{- with $v.nats.nkey.secretName }}
{{- $a = append $a (printf "--nkey=/etc/jetsched/nats/nkey/%s" $v.nats.nkey.key) }}
{{- end }}
{{- if $v.nats.tls.secretName }}
{{- with $v.nats.tls.caKey }}
{{- $a = append $a (printf "--tls-ca=/etc/jetsched/nats/tls/%s" .) }}
{{- end }}
{{- if $v.nats.tls.clientCert }}
{{- $a = append $a (printf "--tls-cert=/etc/jetsched/nats/tls/%s" $v.nats.tls.certKey) }}
{{- $a = append $a (printf "--tls-key=/etc/jetsched/nats/tls/%s" $v.nats.tls.keyKey) }}
{{- end }}
{{- end }}
{{- with $v.nats.jsDomain }}
{{- $a = append $a (printf "--js-domain=%s" .) }}
{{- end }}
{{- $s := $v.scheduler }}
{{- $a = concat $a (list
  (printf "--name-prefix=%s" $s.namePrefix)
  (printf "--replicas=%d" (int $s.bucketReplicas))
  "--instance=$(POD_NAME)"
  (printf "--metrics-listen=0.0.0.0:%d" (int $v.metrics.port))
  (printf "--lease-ttl=%s" $s.leaseTTL)
  (printf "--memory-limit=%s" $s.memoryLimit)
  (printf "--events=%s" $s.events)
  (printf "--log-level=%s" $s.logLevel)
  (printf "--log-format=%s" $s.logFormat)) }}
{{- with $v.audit.secretName }}
{{- $a = append $a (printf "--audit-key-file=/etc/jetsched/audit/%s" $v.audit.key) }}
{{- end }}
{{- range $s.schedulesKeys }}
{{- $a = append $a (printf "--schedules=/etc/jetsched/schedules/%s" .) }}
{{- end }}
{{- if $v.console.enabled }}
{{- $auth := $v.console.auth }}
{{- $a = append $a (printf "--console-listen=0.0.0.0:%d" (int $v.console.port)) }}
{{- $svc := printf "%s-console" (include "jetsched.fullname" .) }}
{{- $ns := .Release.Namespace }}
{{- $hosts := concat (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns)) $v.console.allowedHosts }}
{{- $a = append $a (printf "--console-allowed-hosts=%s" (join "," $hosts)) }}
{{- if eq $auth.type "proxy" }}
{{- $a = append $a (printf "--console-auth=proxy:%s" $auth.header) }}
{{- $a = append $a (printf "--console-trusted-proxies=%s" (join "," $auth.trustedProxies)) }}
{{- with $auth.operators }}
{{- $a = append $a (printf "--console-operators=%s" (join "," .)) }}
{{- end }}
{{- else }}
{{- $a = append $a (printf "--console-auth=%s:/etc/jetsched/console/%s" $auth.type $auth.key) }}
{{- end }}
{{- if $v.console.readOnly }}
{{- $a = append $a "--console-read-only" }}
{{- end }}
{{- end }}
{{- toYaml (concat $a $s.extraArgs) }}
{{- end }}
