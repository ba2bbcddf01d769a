{{- define "web.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
