# Test data, generated (do not edit by hand): the repo document of examples/acme
# as mm2gov builds it (governance.policy.input.build_input, without locations)
# and the admission input of every object `mm2gov generate examples/acme`
# writes to strimzi/, with `patterns` from governance.config.regex.analyse of
# each comma-separated item and `tenant` from the mm2gov.io/tenant label, else
# the tenant owning the KafkaUser's principal or flow. Regenerate it when the
# generator or examples/acme change.
package mm2gov.admission.acme_test

repo := {
	"clusters": {
		"onprem": {
			"name": "onprem",
			"bootstrap_servers": "127.0.0.1:19093",
			"zone": "onprem",
			"security": {
				"protocol": "SASL_SSL",
				"sasl_mechanism": "SCRAM-SHA-512",
				"tls_min_version": "TLSv1.2",
				"ca_secret": "onprem-cluster-ca",
				"admin_credentials_secret": "onprem-admin",
				"client_ca_secret": null,
			},
		},
		"onprem-dr": {
			"name": "onprem-dr",
			"bootstrap_servers": "127.0.0.1:39093",
			"zone": "onprem",
			"security": {
				"protocol": "SASL_SSL",
				"sasl_mechanism": "SCRAM-SHA-512",
				"tls_min_version": "TLSv1.3",
				"ca_secret": "dr-cluster-ca",
				"admin_credentials_secret": "dr-admin",
				"client_ca_secret": null,
			},
		},
		"cloud": {
			"name": "cloud",
			"bootstrap_servers": "127.0.0.1:29093",
			"zone": "cloud",
			"security": {
				"protocol": "SASL_SSL",
				"sasl_mechanism": "SCRAM-SHA-512",
				"tls_min_version": "TLSv1.2",
				"ca_secret": "cloud-cluster-ca",
				"admin_credentials_secret": "cloud-admin",
				"client_ca_secret": null,
			},
		},
	},
	"tenants": {
		"hr": {
			"name": "hr",
			"owners": [
				"hr-systems@acme.example",
			],
			"classification": "restricted",
			"clusters": [
				"onprem",
			],
			"topic_prefixes": [
				"hr.",
			],
			"group_prefixes": [
				"hr-",
			],
			"principals": [
				{
					"name": "User:hr-app",
					"access": [
						"read",
						"write",
					],
				},
			],
			"namespace": null,
			"record_marker": null,
			"flows": [],
			"grants": [],
		},
		"logistics": {
			"name": "logistics",
			"owners": [
				"logistics-it@acme.example",
			],
			"classification": "internal",
			"clusters": [],
			"topic_prefixes": [
				"logistics.",
			],
			"group_prefixes": [
				"logistics-",
			],
			"principals": [
				{
					"name": "User:logistics-app",
					"access": [
						"read",
						"write",
					],
				},
			],
			"namespace": null,
			"record_marker": null,
			"flows": [
				{
					"source": "onprem",
					"target": "cloud",
					"topics": [
						"logistics\\.shipments",
					],
					"groups": [
						"logistics-.*",
					],
					"replication_policy": "identity",
					"id": "logistics-onprem-to-cloud",
					"topic_patterns": [
						{
							"regex": "logistics\\.shipments",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "logistics.shipments",
									"exact": true,
								},
							],
						},
					],
					"group_patterns": [
						{
							"regex": "logistics-.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "logistics-",
									"exact": false,
								},
							],
						},
					],
				},
			],
			"grants": [],
		},
		"marketing": {
			"name": "marketing",
			"owners": [
				"marketing-data@acme.example",
			],
			"classification": "internal",
			"clusters": [],
			"topic_prefixes": [
				"marketing.",
			],
			"group_prefixes": [
				"marketing-",
			],
			"principals": [
				{
					"name": "User:marketing-app",
					"access": [
						"read",
						"write",
					],
				},
			],
			"namespace": null,
			"record_marker": {
				"header": "lob",
				"value": "marketing",
			},
			"flows": [
				{
					"source": "onprem",
					"target": "cloud",
					"topics": [
						"marketing\\.campaigns",
						"marketing\\.leads.*",
					],
					"groups": [
						"marketing-.*",
					],
					"replication_policy": "default",
					"id": "marketing-onprem-to-cloud",
					"topic_patterns": [
						{
							"regex": "marketing\\.campaigns",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "marketing.campaigns",
									"exact": true,
								},
							],
						},
						{
							"regex": "marketing\\.leads.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "marketing.leads",
									"exact": false,
								},
							],
						},
					],
					"group_patterns": [
						{
							"regex": "marketing-.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "marketing-",
									"exact": false,
								},
							],
						},
					],
				},
			],
			"grants": [],
		},
		"payments": {
			"name": "payments",
			"owners": [
				"payments-platform@acme.example",
			],
			"classification": "confidential",
			"clusters": [],
			"topic_prefixes": [
				"payments.",
			],
			"group_prefixes": [
				"payments-",
			],
			"principals": [
				{
					"name": "User:payments-app",
					"access": [
						"read",
						"write",
					],
				},
				{
					"name": "User:payments-analytics",
					"access": [
						"read",
					],
				},
			],
			"namespace": null,
			"record_marker": {
				"header": "lob",
				"value": "payments",
			},
			"flows": [
				{
					"source": "onprem",
					"target": "cloud",
					"topics": [
						"payments\\.orders.*",
						"payments\\.refunds",
						"payments\\.public\\..*",
					],
					"groups": [
						"payments-.*",
					],
					"replication_policy": "default",
					"id": "payments-onprem-to-cloud",
					"topic_patterns": [
						{
							"regex": "payments\\.orders.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments.orders",
									"exact": false,
								},
							],
						},
						{
							"regex": "payments\\.refunds",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments.refunds",
									"exact": true,
								},
							],
						},
						{
							"regex": "payments\\.public\\..*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments.public.",
									"exact": false,
								},
							],
						},
					],
					"group_patterns": [
						{
							"regex": "payments-.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments-",
									"exact": false,
								},
							],
						},
					],
				},
				{
					"source": "onprem",
					"target": "onprem-dr",
					"topics": [
						"payments\\..*",
					],
					"groups": [
						"payments-.*",
					],
					"replication_policy": "default",
					"id": "payments-onprem-to-onprem-dr",
					"topic_patterns": [
						{
							"regex": "payments\\..*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments.",
									"exact": false,
								},
							],
						},
					],
					"group_patterns": [
						{
							"regex": "payments-.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "payments-",
									"exact": false,
								},
							],
						},
					],
				},
			],
			"grants": [
				{
					"to": "marketing",
					"topics": [
						"payments.public.",
					],
					"access": [
						"read",
					],
				},
			],
		},
		"risk": {
			"name": "risk",
			"owners": [
				"risk-engineering@acme.example",
			],
			"classification": "restricted",
			"clusters": [],
			"topic_prefixes": [
				"risk.",
			],
			"group_prefixes": [
				"risk-",
			],
			"principals": [
				{
					"name": "User:risk-engine",
					"access": [
						"read",
						"write",
					],
				},
				{
					"name": "User:risk-reporting",
					"access": [
						"read",
					],
				},
			],
			"namespace": null,
			"record_marker": {
				"header": "lob",
				"value": "risk",
			},
			"flows": [
				{
					"source": "onprem",
					"target": "onprem-dr",
					"topics": [
						"risk\\.exposures",
						"risk\\.limits.*",
					],
					"groups": [
						"risk-.*",
					],
					"replication_policy": "default",
					"id": "risk-onprem-to-onprem-dr",
					"topic_patterns": [
						{
							"regex": "risk\\.exposures",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "risk.exposures",
									"exact": true,
								},
							],
						},
						{
							"regex": "risk\\.limits.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "risk.limits",
									"exact": false,
								},
							],
						},
					],
					"group_patterns": [
						{
							"regex": "risk-.*",
							"case_insensitive": false,
							"alternatives": [
								{
									"literal_prefix": "risk-",
									"exact": false,
								},
							],
						},
					],
				},
			],
			"grants": [],
		},
	},
}

inputs := [
	{
		"operation": "CREATE",
		"kind": "KafkaMirrorMaker2",
		"namespace": "kafka-cloud",
		"name": "logistics-onprem-to-cloud",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaMirrorMaker2",
			"metadata": {
				"name": "logistics-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"mm2gov.io/tenant": "logistics",
					"mm2gov.io/flow": "logistics-onprem-to-cloud",
				},
			},
			"spec": {
				"version": "4.3.1",
				"replicas": 1,
				"target": {
					"alias": "cloud",
					"bootstrapServers": "127.0.0.1:29093",
					"authentication": {
						"type": "scram-sha-512",
						"username": "mm2-logistics-onprem-to-cloud",
						"passwordSecret": {
							"secretName": "scram-cloud-mm2-logistics-onprem-to-cloud",
							"password": "password",
						},
					},
					"tls": {
						"trustedCertificates": [
							{
								"secretName": "cloud-cluster-ca",
								"certificate": "ca.crt",
							},
						],
					},
					"groupId": "mm2gov.logistics-onprem-to-cloud.connect",
					"configStorageTopic": "mm2gov.logistics-onprem-to-cloud.configs",
					"offsetStorageTopic": "mm2gov.logistics-onprem-to-cloud.offsets",
					"statusStorageTopic": "mm2gov.logistics-onprem-to-cloud.status",
					"config": {
						"config.storage.replication.factor": -1,
						"offset.storage.replication.factor": -1,
						"status.storage.replication.factor": -1,
					},
				},
				"mirrors": [
					{
						"source": {
							"alias": "onprem",
							"bootstrapServers": "127.0.0.1:19093",
							"authentication": {
								"type": "scram-sha-512",
								"username": "mm2-logistics-onprem-to-cloud",
								"passwordSecret": {
									"secretName": "scram-onprem-mm2-logistics-onprem-to-cloud",
									"password": "password",
								},
							},
							"tls": {
								"trustedCertificates": [
									{
										"secretName": "onprem-cluster-ca",
										"certificate": "ca.crt",
									},
								],
							},
						},
						"sourceConnector": {
							"tasksMax": 1,
							"config": {
								"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
								"replication.factor": -1,
								"sync.topic.acls.enabled": "false",
								"sync.topic.configs.enabled": "true",
								"emit.offset-syncs.enabled": "false",
								"refresh.topics.interval.seconds": 30,
							},
						},
						"topicsPattern": "logistics\\.shipments",
						"topicsExcludePattern": ".*[\\-\\.]internal,.*\\.replica,__.*,mm2gov\\..*",
						"groupsPattern": "logistics-.*",
					},
				],
			},
		},
		"patterns": {
			"logistics\\.shipments": {
				"regex": "logistics\\.shipments",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "logistics.shipments",
						"exact": true,
					},
				],
			},
			".*[\\-\\.]internal": {
				"regex": ".*[\\-\\.]internal",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			".*\\.replica": {
				"regex": ".*\\.replica",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			"__.*": {
				"regex": "__.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "__",
						"exact": false,
					},
				],
			},
			"mm2gov\\..*": {
				"regex": "mm2gov\\..*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "mm2gov.",
						"exact": false,
					},
				],
			},
			"logistics-.*": {
				"regex": "logistics-.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "logistics-",
						"exact": false,
					},
				],
			},
		},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaMirrorMaker2",
		"namespace": "kafka-cloud",
		"name": "marketing-onprem-to-cloud",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaMirrorMaker2",
			"metadata": {
				"name": "marketing-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"mm2gov.io/tenant": "marketing",
					"mm2gov.io/flow": "marketing-onprem-to-cloud",
				},
			},
			"spec": {
				"version": "4.3.1",
				"replicas": 1,
				"target": {
					"alias": "cloud",
					"bootstrapServers": "127.0.0.1:29093",
					"authentication": {
						"type": "scram-sha-512",
						"username": "mm2-marketing-onprem-to-cloud",
						"passwordSecret": {
							"secretName": "scram-cloud-mm2-marketing-onprem-to-cloud",
							"password": "password",
						},
					},
					"tls": {
						"trustedCertificates": [
							{
								"secretName": "cloud-cluster-ca",
								"certificate": "ca.crt",
							},
						],
					},
					"groupId": "mm2gov.marketing-onprem-to-cloud.connect",
					"configStorageTopic": "mm2gov.marketing-onprem-to-cloud.configs",
					"offsetStorageTopic": "mm2gov.marketing-onprem-to-cloud.offsets",
					"statusStorageTopic": "mm2gov.marketing-onprem-to-cloud.status",
					"config": {
						"config.storage.replication.factor": -1,
						"offset.storage.replication.factor": -1,
						"status.storage.replication.factor": -1,
					},
				},
				"mirrors": [
					{
						"source": {
							"alias": "onprem",
							"bootstrapServers": "127.0.0.1:19093",
							"authentication": {
								"type": "scram-sha-512",
								"username": "mm2-marketing-onprem-to-cloud",
								"passwordSecret": {
									"secretName": "scram-onprem-mm2-marketing-onprem-to-cloud",
									"password": "password",
								},
							},
							"tls": {
								"trustedCertificates": [
									{
										"secretName": "onprem-cluster-ca",
										"certificate": "ca.crt",
									},
								],
							},
						},
						"sourceConnector": {
							"tasksMax": 1,
							"config": {
								"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
								"replication.factor": -1,
								"sync.topic.acls.enabled": "false",
								"sync.topic.configs.enabled": "true",
								"emit.offset-syncs.enabled": "false",
								"refresh.topics.interval.seconds": 30,
							},
						},
						"topicsPattern": "marketing\\.campaigns,marketing\\.leads.*",
						"topicsExcludePattern": ".*[\\-\\.]internal,.*\\.replica,__.*,mm2gov\\..*",
						"groupsPattern": "marketing-.*",
					},
				],
			},
		},
		"patterns": {
			"marketing\\.campaigns": {
				"regex": "marketing\\.campaigns",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "marketing.campaigns",
						"exact": true,
					},
				],
			},
			"marketing\\.leads.*": {
				"regex": "marketing\\.leads.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "marketing.leads",
						"exact": false,
					},
				],
			},
			".*[\\-\\.]internal": {
				"regex": ".*[\\-\\.]internal",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			".*\\.replica": {
				"regex": ".*\\.replica",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			"__.*": {
				"regex": "__.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "__",
						"exact": false,
					},
				],
			},
			"mm2gov\\..*": {
				"regex": "mm2gov\\..*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "mm2gov.",
						"exact": false,
					},
				],
			},
			"marketing-.*": {
				"regex": "marketing-.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "marketing-",
						"exact": false,
					},
				],
			},
		},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaMirrorMaker2",
		"namespace": "kafka-cloud",
		"name": "payments-onprem-to-cloud",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaMirrorMaker2",
			"metadata": {
				"name": "payments-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"mm2gov.io/tenant": "payments",
					"mm2gov.io/flow": "payments-onprem-to-cloud",
				},
			},
			"spec": {
				"version": "4.3.1",
				"replicas": 1,
				"target": {
					"alias": "cloud",
					"bootstrapServers": "127.0.0.1:29093",
					"authentication": {
						"type": "scram-sha-512",
						"username": "mm2-payments-onprem-to-cloud",
						"passwordSecret": {
							"secretName": "scram-cloud-mm2-payments-onprem-to-cloud",
							"password": "password",
						},
					},
					"tls": {
						"trustedCertificates": [
							{
								"secretName": "cloud-cluster-ca",
								"certificate": "ca.crt",
							},
						],
					},
					"groupId": "mm2gov.payments-onprem-to-cloud.connect",
					"configStorageTopic": "mm2gov.payments-onprem-to-cloud.configs",
					"offsetStorageTopic": "mm2gov.payments-onprem-to-cloud.offsets",
					"statusStorageTopic": "mm2gov.payments-onprem-to-cloud.status",
					"config": {
						"config.storage.replication.factor": -1,
						"offset.storage.replication.factor": -1,
						"status.storage.replication.factor": -1,
					},
				},
				"mirrors": [
					{
						"source": {
							"alias": "onprem",
							"bootstrapServers": "127.0.0.1:19093",
							"authentication": {
								"type": "scram-sha-512",
								"username": "mm2-payments-onprem-to-cloud",
								"passwordSecret": {
									"secretName": "scram-onprem-mm2-payments-onprem-to-cloud",
									"password": "password",
								},
							},
							"tls": {
								"trustedCertificates": [
									{
										"secretName": "onprem-cluster-ca",
										"certificate": "ca.crt",
									},
								],
							},
						},
						"sourceConnector": {
							"tasksMax": 1,
							"config": {
								"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
								"replication.factor": -1,
								"sync.topic.acls.enabled": "false",
								"sync.topic.configs.enabled": "true",
								"emit.offset-syncs.enabled": "false",
								"refresh.topics.interval.seconds": 30,
							},
						},
						"topicsPattern": "payments\\.orders.*,payments\\.refunds,payments\\.public\\..*",
						"topicsExcludePattern": ".*[\\-\\.]internal,.*\\.replica,__.*,mm2gov\\..*",
						"groupsPattern": "payments-.*",
					},
				],
			},
		},
		"patterns": {
			"payments\\.orders.*": {
				"regex": "payments\\.orders.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "payments.orders",
						"exact": false,
					},
				],
			},
			"payments\\.refunds": {
				"regex": "payments\\.refunds",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "payments.refunds",
						"exact": true,
					},
				],
			},
			"payments\\.public\\..*": {
				"regex": "payments\\.public\\..*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "payments.public.",
						"exact": false,
					},
				],
			},
			".*[\\-\\.]internal": {
				"regex": ".*[\\-\\.]internal",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			".*\\.replica": {
				"regex": ".*\\.replica",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "",
						"exact": false,
					},
				],
			},
			"__.*": {
				"regex": "__.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "__",
						"exact": false,
					},
				],
			},
			"mm2gov\\..*": {
				"regex": "mm2gov\\..*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "mm2gov.",
						"exact": false,
					},
				],
			},
			"payments-.*": {
				"regex": "payments-.*",
				"case_insensitive": false,
				"alternatives": [
					{
						"literal_prefix": "payments-",
						"exact": false,
					},
				],
			},
		},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaTopic",
		"namespace": "kafka-cloud",
		"name": "logistics.shipments",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaTopic",
			"metadata": {
				"name": "logistics.shipments",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "logistics",
				},
			},
			"spec": {
				"topicName": "logistics.shipments",
				"config": {},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaTopic",
		"namespace": "kafka-cloud",
		"name": "onprem.marketing.campaigns",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaTopic",
			"metadata": {
				"name": "onprem.marketing.campaigns",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "marketing",
				},
			},
			"spec": {
				"topicName": "onprem.marketing.campaigns",
				"config": {},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaTopic",
		"namespace": "kafka-cloud",
		"name": "onprem.payments.refunds",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaTopic",
			"metadata": {
				"name": "onprem.payments.refunds",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"topicName": "onprem.payments.refunds",
				"config": {},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "logistics-app",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "logistics-app",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "logistics",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-logistics-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "logistics-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "marketing-app",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "marketing-app",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "marketing",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-marketing-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "marketing-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.public.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.public.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "mm2-logistics-onprem-to-cloud",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-logistics-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "logistics",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-mm2-logistics-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Alter",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"AlterConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.logistics-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "mm2-marketing-onprem-to-cloud",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-marketing-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "marketing",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-mm2-marketing-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.marketing-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Alter",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"AlterConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "mm2-payments-onprem-to-cloud",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-payments-onprem-to-cloud",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-mm2-payments-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "mm2gov.payments-onprem-to-cloud.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Alter",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"AlterConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Create",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "payments-analytics",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "payments-analytics",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-payments-analytics",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-cloud",
		"name": "payments-app",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "payments-app",
				"namespace": "kafka-cloud",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "cloud",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-cloud-payments-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "onprem.payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "hr-app",
		"tenant": "hr",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "hr-app",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "hr",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-hr-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "hr-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "hr.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "hr.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "hr.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "logistics-app",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "logistics-app",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "logistics",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-logistics-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "logistics-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "marketing-app",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "marketing-app",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "marketing",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-marketing-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "marketing-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.public.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.public.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "mm2-logistics-onprem-to-cloud",
		"tenant": "logistics",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-logistics-onprem-to-cloud",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "logistics",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-mm2-logistics-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "logistics-",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "logistics.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "mm2-marketing-onprem-to-cloud",
		"tenant": "marketing",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-marketing-onprem-to-cloud",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "marketing",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-mm2-marketing-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "marketing-",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "marketing.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "mm2-payments-onprem-to-cloud",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-payments-onprem-to-cloud",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-mm2-payments-onprem-to-cloud",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "mm2-payments-onprem-to-onprem-dr",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-payments-onprem-to-onprem-dr",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-mm2-payments-onprem-to-onprem-dr",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "mm2-risk-onprem-to-onprem-dr",
		"tenant": "risk",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "mm2-risk-onprem-to-onprem-dr",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "risk",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-mm2-risk-onprem-to-onprem-dr",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "cluster",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "group",
								"name": "risk-",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"DescribeConfigs",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "payments-analytics",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "payments-analytics",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-payments-analytics",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "payments-app",
		"tenant": "payments",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "payments-app",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "payments",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-payments-app",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "payments-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "payments.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "risk-engine",
		"tenant": "risk",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "risk-engine",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "risk",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-risk-engine",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "risk-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Write",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
	{
		"operation": "CREATE",
		"kind": "KafkaUser",
		"namespace": "kafka-onprem",
		"name": "risk-reporting",
		"tenant": "risk",
		"old_tenant": "",
		"object": {
			"apiVersion": "kafka.strimzi.io/v1",
			"kind": "KafkaUser",
			"metadata": {
				"name": "risk-reporting",
				"namespace": "kafka-onprem",
				"labels": {
					"app.kubernetes.io/managed-by": "mm2gov",
					"strimzi.io/cluster": "onprem",
					"mm2gov.io/tenant": "risk",
				},
			},
			"spec": {
				"authentication": {
					"type": "scram-sha-512",
					"password": {
						"valueFrom": {
							"secretKeyRef": {
								"name": "scram-onprem-risk-reporting",
								"key": "password",
							},
						},
					},
				},
				"authorization": {
					"type": "simple",
					"acls": [
						{
							"resource": {
								"type": "group",
								"name": "risk-",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Describe",
							],
							"host": "*",
						},
						{
							"resource": {
								"type": "topic",
								"name": "risk.",
								"patternType": "prefix",
							},
							"operations": [
								"Read",
							],
							"host": "*",
						},
					],
				},
			},
		},
		"patterns": {},
	},
]
