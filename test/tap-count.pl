#!/usr/bin/perl
# A prove / pg_prove stand-in that also counts: runs TAP test files (or,
# with -d, pgTAP .sql files against that database) with TAP::Harness and,
# with --count NAME and MEMTX_TEST_OUT set, writes "passed failed" (counted
# in assertions; a file that dies or plans wrong counts one failure more) to
# $MEMTX_TEST_OUT/NAME.count.  test/run passes it to make as PROVE or
# PG_PROVE, so the make targets run the tests with their own settings.
#
#   perl test/tap-count.pl [--count NAME] [-I DIR]... [-d DBNAME] FILE...
use strict;
use warnings;
use Getopt::Long qw(:config no_ignore_case bundling);
use TAP::Harness;

my ($name, $db, @lib);
GetOptions('count=s' => \$name, 'I=s' => \@lib, 'd|dbname=s' => \$db)
  or die "usage: tap-count.pl [--count NAME] [-I DIR]... [-d DBNAME] FILE...\n";
my %args = (verbosity => 0, lib => \@lib);
$args{sources} = { pgTAP => { dbname => $db, suffix => '.sql' } } if defined $db;
my $agg = TAP::Harness->new(\%args)->runtests(@ARGV);
my ($passed, $failed) = (0, 0);
for my $f ($agg->descriptions) {
	my ($p) = $agg->parsers($f);
	$passed += scalar($p->passed);
	$failed += scalar($p->failed);
	$failed += 1 if $p->has_problems && !scalar($p->failed);
}
if (defined $name && $ENV{MEMTX_TEST_OUT}) {
	open my $fh, '>', "$ENV{MEMTX_TEST_OUT}/$name.count" or die $!;
	print $fh "$passed $failed\n";
	close $fh;
}
exit($failed ? 1 : 0);
