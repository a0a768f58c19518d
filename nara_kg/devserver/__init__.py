"""The project-managed local Neo4j server: assemble, configure, start, stop, report.

The server is a genuine Neo4j 5.26 Community + open Graph Data Science 2.13, assembled from Maven
Central by ``neo4j/pom.xml`` into ``<home>`` (default ``neo4j/home``, see
:func:`nara_kg.settings.neo4j_home`)::

    <home>/lib/          Neo4j and its dependencies          (mvn -Pneo4j-lib)
    <home>/plugins/      GDS and the dependencies lib lacks  (mvn -Pgds-plugins)
    <home>/conf/         neo4j.conf, regenerated on every start from the settings
    <home>/data/         databases, transaction logs, auth   (delete it to reset the server)
    <home>/logs/         console.log (server stdout/stderr), debug.log, ...
    <home>/run/neo4j.pid

It is launched the way the official launcher does it (classpath ``lib/*:plugins/*``; GDS
procedures are found by scanning ``plugins/``, its kernel extension on the classpath), bound to
127.0.0.1 only, Bolt only, with authentication on.

When ``NEO4J_URI`` is set (``settings.managed`` is False) nothing local is started or stopped:
:func:`~nara_kg.devserver.process.start` only checks that the external server answers.

* :mod:`~nara_kg.devserver.layout`: versions, where things are in the home, the Java to run;
* :mod:`~nara_kg.devserver.assembly`: the jars from Maven Central and the initial password;
* :mod:`~nara_kg.devserver.config`: ``neo4j.conf`` and the JVM options;
* :mod:`~nara_kg.devserver.process`: start, stop and status of the server process.
"""
